package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/internal/procfs"
)

// fault is one way to hurt a process.
type fault int

const (
	faultKill     fault = iota + 1 // SIGKILL
	faultStopCont                  // SIGSTOP, a pause, SIGCONT
	faultStopKill                  // SIGSTOP, a pause, SIGKILL
)

func (f fault) String() string {
	switch f {
	case faultKill:
		return "SIGKILL"
	case faultStopCont:
		return "SIGSTOP+SIGCONT"
	case faultStopKill:
		return "SIGSTOP+SIGKILL"
	}
	return fmt.Sprintf("fault(%d)", int(f))
}

// tally counts outcomes and collects violations.
type tally struct {
	mu         sync.Mutex
	rounds     map[string]int
	outcomes   map[string]int
	details    map[string]int
	calls      int
	violations []string
}

func newTally() *tally {
	return &tally{rounds: map[string]int{}, outcomes: map[string]int{}, details: map[string]int{}}
}

func (t *tally) violate(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.violations = append(t.violations, fmt.Sprintf(format, args...))
}

// call is one recorded tool call of a round.
type call struct {
	marker  string
	outcome string // completed, not_started, unknown, or "" when none came
	detail  string
}

// checkMarkers is the side-effect oracle: COMPLETED ⇒ written, NOT_STARTED ⇒ not
// written, every call has an outcome, and every written marker belongs to a call that may
// have run.
func (t *tally) checkMarkers(round string, path string, calls []call) {
	written := map[string]bool{}
	if b, err := os.ReadFile(path); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l != "" {
				written[l] = true
			}
		}
	}
	t.mu.Lock()
	t.calls += len(calls)
	for _, c := range calls {
		t.outcomes[c.outcome]++
		if c.outcome != "completed" {
			d := c.detail
			if len(d) > 70 {
				d = d[:70]
			}
			t.details[c.outcome+" "+d]++
		}
	}
	t.mu.Unlock()
	for _, c := range calls {
		switch c.outcome {
		case "completed":
			if !written[c.marker] {
				t.violate("%s: %s COMPLETED but not written", round, c.marker)
			}
		case "not_started":
			if written[c.marker] {
				t.violate("%s: %s NOT_STARTED (%s) but written", round, c.marker, c.detail)
			}
		case "unknown":
		default:
			t.violate("%s: %s has no outcome (%s)", round, c.marker, c.detail)
		}
		delete(written, c.marker)
	}
	for m := range written {
		t.violate("%s: marker %s written by no recorded call", round, m)
	}
}

// accountProcesses: after a round every child this process started is gone and reaped
// (no child left, no zombie) within the bound.
func (t *tally) accountProcesses(round string, pids ...int) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		kids := children(os.Getpid())
		alive := []int{}
		for _, pid := range pids {
			if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
				alive = append(alive, pid)
			}
		}
		if len(kids) == 0 && len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			desc := []string{}
			for _, k := range kids {
				desc = append(desc, fmt.Sprintf("%d(%s)", k, procState(k)))
			}
			t.violate("%s: processes left after the round: children %v, spawned still present %v", round, desc, alive)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// children lists the processes whose parent is ppid (zombies included).
func children(ppid int) []int { return procfs.Children(ppid) }

// procState returns pid's one-letter state, "gone" when it cannot be read, or "?".
func procState(pid int) string {
	st, err := procfs.ReadStat(pid)
	switch {
	case errors.Is(err, procfs.ErrMalformed):
		return "?"
	case err != nil:
		return "gone"
	}
	return string(st.State)
}

// injector applies a fault to pid after a random delay, unless stopped first.
func inject(ctx context.Context, r *rand.Rand, f fault, pid int, maxDelay time.Duration, hit func()) (wait func()) {
	delay := time.Duration(r.Int64N(int64(maxDelay)))
	pause := time.Duration(10+r.IntN(400)) * time.Millisecond
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return
		}
		hit()
		switch f {
		case faultKill:
			syscall.Kill(pid, syscall.SIGKILL)
		case faultStopCont, faultStopKill:
			syscall.Kill(pid, syscall.SIGSTOP)
			time.Sleep(pause)
			if f == faultStopCont {
				syscall.Kill(pid, syscall.SIGCONT)
			} else {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}()
	return func() { <-done }
}

// workerRound: several sessions call marker (and marker_after_sleep) concurrently while
// the worker is killed or stopped at a random point.
func workerRound(ctx context.Context, t *tally, r *rand.Rand, n int, dir string, sessions, perSession int) {
	f := fault(1 + r.IntN(3))
	round := fmt.Sprintf("worker round %d (%v)", n, f)
	t.mu.Lock()
	t.rounds["worker "+f.String()]++
	t.mu.Unlock()
	path := filepath.Join(dir, fmt.Sprintf("markers-w%d", n))
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	h, err := host.Start(sctx, host.Options{CloseGrace: 100 * time.Millisecond})
	cancel()
	if err != nil {
		t.violate("%s: start: %v", round, err)
		return
	}
	pid := h.PID()
	var ss []*host.Session
	for k := range sessions {
		s, err := h.CreateSession(ctx, host.SessionSpec{Label: fmt.Sprintf("s%d", k)})
		if err != nil {
			t.violate("%s: create session: %v", round, err)
			h.Close()
			return
		}
		ss = append(ss, s)
	}
	var mu sync.Mutex
	var calls []call
	var hit atomic.Bool
	waitInject := inject(ctx, r, f, pid, 300*time.Millisecond, func() { hit.Store(true) })
	hardStop := time.Now().Add(5 * time.Second)
	var wg sync.WaitGroup
	for k, s := range ss {
		for g := range perSession {
			wg.Add(1)
			seed := r.Uint64()
			go func() {
				defer wg.Done()
				gr := rand.New(rand.NewPCG(seed, 0))
				stopAt := time.Time{}
				for c := 0; ; c++ {
					if (!stopAt.IsZero() && time.Now().After(stopAt)) || time.Now().After(hardStop) {
						return
					}
					marker := fmt.Sprintf("w%d-s%d-g%d-%d", n, k, g, c)
					tool, args := "marker", map[string]any{"path": path, "marker": marker}
					if gr.IntN(3) == 0 {
						tool, args["ms"] = "marker_after_sleep", gr.IntN(20)
					}
					b, _ := json.Marshal(args)
					cctx, cancel := context.WithTimeout(ctx, 800*time.Millisecond)
					res, err := s.Call(cctx, tool, b)
					cancel()
					c := call{marker: marker, outcome: strings.ToLower(res.Outcome.String())}
					if res.Refusal != nil {
						c.detail = res.Refusal.Code
					} else if err != nil {
						c.detail = err.Error()
					}
					mu.Lock()
					calls = append(calls, c)
					mu.Unlock()
					if c.outcome != "completed" {
						// A dead or stopped worker answers at once; do not spin.
						time.Sleep(time.Duration(1+gr.IntN(5)) * time.Millisecond)
					}
					if stopAt.IsZero() && hit.Load() {
						// Keep calling for a while after the fault: calls on a dead or
						// stopped worker get NOT_STARTED or UNKNOWN, never a lie.
						stopAt = time.Now().Add(time.Duration(100+gr.IntN(400)) * time.Millisecond)
					}
				}
			}()
		}
	}
	wg.Wait()
	waitInject()
	h.Close()
	t.checkMarkers(round, path, calls)
	t.accountProcesses(round, pid)
}
