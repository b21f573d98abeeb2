package worker

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/client"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// TestConcurrentMixedSessions runs 16 sessions in mixed modes on one worker, 200 calls
// each from two goroutines per session, and checks every decision against what that
// session alone implies: no decision depends on another session.
func TestConcurrentMixedSessions(t *testing.T) {
	sc := newScene(t, sceneOptions{consent: func(req *cuav1.ConsentRequest) (bool, uint32, bool) {
		switch {
		case strings.HasPrefix(req.GetLabel(), "grant"):
			return true, 60, false
		case strings.HasPrefix(req.GetLabel(), "noprov"):
			return false, 0, true
		}
		return false, 0, false
	}})
	kinds := []string{"grant", "decline", "noprov", "bounded", "unres"}
	type sess struct {
		label   string
		kind    string
		c       *client.Conn
		pid     int
		win     uint32
		ranWant map[string]int
	}
	sessions := make([]*sess, 16)
	for i := range sessions {
		kind := kinds[i%len(kinds)]
		s := &sess{label: fmt.Sprintf("%s-%02d", kind, i), kind: kind, ranWant: map[string]int{}}
		switch kind {
		case "bounded":
			s.c = sc.h.mustSession(s.label, authz.Bounded, sleepManifest)
		case "unres":
			s.c = sc.h.mustSession(s.label, authz.Unrestricted, "")
		default:
			s.c = sc.h.mustSession(s.label, authz.Standard, "")
		}
		s.pid, s.win = sc.launch(t, s.c)
		sessions[i] = s
	}
	// consent is what a standard session gets when it needs a grant.
	consent := map[string]authz.Code{"grant": "", "decline": authz.CodeAuthorizationDeclined, "noprov": authz.CodeAuthorizationRequired}
	// expected returns the code for action a of session s (other is another session).
	expected := func(s *sess, a int) (string, map[string]any, authz.Code) {
		std := s.kind == "grant" || s.kind == "decline" || s.kind == "noprov"
		other := sessions[(indexOf(sessions, s)+1)%len(sessions)]
		pick := func(stdCode, bounded authz.Code) authz.Code {
			switch {
			case std:
				return stdCode
			case s.kind == "bounded":
				return bounded
			}
			return ""
		}
		switch a {
		case 0:
			return "noop", nil, ""
		case 1:
			return "click", win(s.pid, s.win), ""
		case 2:
			return "click", win(sc.foreignPID, sc.foreignWin), pick(consent[s.kind], "")
		case 3:
			return "click", win(sc.tailPID, sc.tailWin), pick(consent[s.kind], authz.CodeOutsideManifest)
		case 4:
			return "click", win(sc.protPID, sc.protWin), authz.CodeSelfTargetDenied
		case 5:
			return "get_desktop_state", nil, pick(consent[s.kind], authz.CodeOutsideManifest)
		case 6:
			return "zoom", map[string]any{"pid": other.pid, "window_id": other.win}, pick(consent[s.kind], "")
		case 7:
			return "kill_app", map[string]any{"pid": other.pid}, pick(consent[s.kind], authz.CodeForeignProcessTermination)
		default:
			return "type_text", map[string]any{"pid": s.pid, "window_id": s.win, "text": "x"}, pick("", authz.CodeManifestDenied)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i, s := range sessions {
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(i), uint64(g)))
				for range 100 {
					name, args, want := expected(s, rng.IntN(9))
					res, err := s.c.Call(t.Context(), name, mustArgs(args))
					ok := err == nil
					if want == "" {
						ok = ok && res.Outcome == client.Completed && res.Refusal == nil
					} else {
						ok = ok && res.Outcome == client.NotStarted && res.Refusal != nil && res.Refusal.Code == string(want)
					}
					if !ok {
						select {
						case errs <- fmt.Sprintf("%s %s(%v) = %+v %v, want %q", s.label, name, args, res, err, want):
						default:
						}
						continue
					}
					if want == "" {
						mu.Lock()
						s.ranWant[name]++
						mu.Unlock()
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	for _, s := range sessions {
		for _, name := range []string{"noop", "click", "get_desktop_state", "zoom", "kill_app", "type_text"} {
			if got, want := sc.rec.ran(s.label, name), s.ranWant[name]; got != want {
				t.Errorf("%s: %s ran %d times, %d allowed", s.label, name, got, want)
			}
		}
	}
}

func indexOf[T comparable](s []T, v T) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
