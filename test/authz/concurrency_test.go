package authze2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
)

// TestConcurrentSessions runs 16 sessions in mixed modes on one real worker, 200 calls
// each (two goroutines per session), and checks every decision against the session's own
// mode and manifest, and every session's marker file against the markers it was allowed
// to write: no decision depends on another session.
func TestConcurrentSessions(t *testing.T) {
	requireDesktop(t)
	protected := startApp(t, appB, "protected-c")
	place(t, protected, 0, 460)
	foreign := startApp(t, appB, "foreign-c")
	place(t, foreign, 330, 460)
	g := &safeGrants{}
	h := startSharedHost(t, host.Options{Consent: g.decide, ProtectedPIDs: []int{protected.PID}})
	dir := t.TempDir()
	kinds := []string{"grant-std", "decline-std", "bounded", "unrestricted"}
	man := boundedManifest(appA, []string{"noop", "get_session", "zoom"}, []string{"get_desktop_state"})
	type sess struct {
		label, kind string
		s           *host.Session
		oracle      string
		// allowed counts the marker calls that completed.
		allowed int
	}
	sessions := make([]*sess, 16)
	for i := range sessions {
		k := kinds[i%len(kinds)]
		spec := host.SessionSpec{Label: fmt.Sprintf("%s-%02d", k, i)}
		switch k {
		case "bounded":
			spec.Mode, spec.Manifest = authz.Bounded, man
		case "unrestricted":
			spec.Mode = authz.Unrestricted
		}
		sessions[i] = &sess{label: spec.Label, kind: k, s: session(t, h, spec), oracle: filepath.Join(dir, spec.Label)}
	}
	zoom := func(a *app) map[string]any {
		return map[string]any{"pid": a.PID, "window_id": a.Window, "x1": 0, "y1": 0, "x2": 8, "y2": 8}
	}
	expected := func(s *sess, action int) (string, map[string]any, authz.Code) {
		byKind := func(grant, decline, bounded, unres authz.Code) authz.Code {
			return map[string]authz.Code{"grant-std": grant, "decline-std": decline, "bounded": bounded, "unrestricted": unres}[s.kind]
		}
		switch action {
		case 0:
			return "noop", nil, ""
		case 1:
			return "marker", markerArgs(s.oracle, "m", nil), byKind("", "", authz.CodeOutsideManifest, "")
		case 2:
			return "get_session", nil, ""
		case 3:
			return "zoom", zoom(foreign), byKind("", authz.CodeAuthorizationDeclined, authz.CodeOutsideManifest, "")
		case 4:
			return "zoom", zoom(protected), authz.CodeSelfTargetDenied
		default:
			return "get_desktop_state", map[string]any{"max_dimension": 64}, byKind("", authz.CodeAuthorizationDeclined, authz.CodeManifestDenied, "")
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, s := range sessions {
		for gi := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(i), uint64(gi)))
				for range 100 {
					name, args, want := expected(s, rng.IntN(6))
					res, err := s.s.Call(t.Context(), name, jsonArgs(args))
					if err != nil {
						t.Errorf("%s %s: %v", s.label, name, err)
						return
					}
					if !check(t, s.label+" "+name, res, want) {
						return
					}
					if name == "marker" && want == "" {
						mu.Lock()
						s.allowed++
						mu.Unlock()
					}
				}
			}()
		}
	}
	wg.Wait()
	for _, s := range sessions {
		if got := len(markers(t, s.oracle)); got != s.allowed {
			t.Errorf("%s: %d markers written, %d allowed", s.label, got, s.allowed)
		}
	}
}

// safeGrants is grantByLabel for concurrent use.
type safeGrants struct {
	mu sync.Mutex
	g  grantByLabel
}

func (s *safeGrants) decide(ctx context.Context, req host.ConsentRequest) host.ConsentDecision {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.g.decide(ctx, req)
}
