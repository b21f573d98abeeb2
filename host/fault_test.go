package host

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestOutcomesUnderWorkerKill: SIGKILL the worker at random points during 500 marker
// calls. Every COMPLETED call wrote its marker, every NOT_STARTED call did not, and every
// call has an outcome. UNKNOWN is allowed only for calls that were written before the kill.
func TestOutcomesUnderWorkerKill(t *testing.T) {
	const total = 500
	dir := t.TempDir()
	path := filepath.Join(dir, "markers")
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))

	type rec struct {
		marker string
		res    Result
	}
	var recs []rec
	var mu sync.Mutex
	calls := 0
	kills := 0
	for calls < total {
		h := startHost(t, Options{CloseGrace: 50 * time.Millisecond})
		s := newSession(t, h, "f")
		// Kill after a random delay while 4 goroutines keep calling.
		killAfter := time.Duration(rng.IntN(8000)) * time.Microsecond
		killer := time.AfterFunc(killAfter, func() { syscall.Kill(h.PID(), syscall.SIGKILL) })
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				failures := 0
				for n := 0; ; n++ {
					mu.Lock()
					if calls >= total {
						mu.Unlock()
						return
					}
					calls++
					mu.Unlock()
					marker := fmt.Sprintf("k%d-g%d-%d", kills, g, n)
					res, _ := s.Call(context.Background(), "marker", mustJSON(map[string]any{"path": path, "marker": marker}))
					mu.Lock()
					recs = append(recs, rec{marker, res})
					mu.Unlock()
					if res.Outcome != Completed {
						// Keep calling a dead worker a little: those calls must be NOT_STARTED.
						if failures++; failures > 3 {
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		killer.Stop()
		h.Close()
		kills++
	}
	written := readMarkers(t, dir)
	counts := map[Outcome]int{}
	for _, r := range recs {
		counts[r.res.Outcome]++
		switch r.res.Outcome {
		case Completed:
			if !written[r.marker] {
				t.Errorf("%s: COMPLETED but not written", r.marker)
			}
		case NotStarted:
			if written[r.marker] {
				t.Errorf("%s: NOT_STARTED but written", r.marker)
			}
		case Unknown:
		default:
			t.Errorf("%s: no outcome (%+v)", r.marker, r.res)
		}
		delete(written, r.marker)
	}
	for m := range written {
		t.Errorf("marker %s written by no recorded call", m)
	}
	if len(recs) != total {
		t.Errorf("%d outcomes for %d calls", len(recs), total)
	}
	t.Logf("%d calls over %d workers: completed %d, not_started %d, unknown %d",
		len(recs), kills, counts[Completed], counts[NotStarted], counts[Unknown])
}
