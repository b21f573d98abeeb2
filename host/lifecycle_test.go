package host

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestHostKilledWorkerDies: kill -9 of the host process ends its worker within 200 ms.
func TestHostKilledWorkerDies(t *testing.T) {
	for i := range 5 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "CUA_TEST_ROLE=host")
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("read worker pid from host role: %v", err)
		}
		var wpid int
		if _, err := fmt.Sscanf(line, "worker %d", &wpid); err != nil {
			t.Fatalf("host role printed %q", line)
		}
		if processGone(wpid) {
			t.Fatalf("worker %d not running before the kill", wpid)
		}
		start := time.Now()
		cmd.Process.Signal(syscall.SIGKILL)
		took, gone := waitGone(wpid, 2*time.Second)
		cmd.Wait()
		if !gone || took > 200*time.Millisecond {
			t.Errorf("run %d: worker %d gone=%v %v after kill -9 of its host, want ≤ 200ms", i, wpid, gone, took)
		}
		t.Logf("run %d: worker gone %v after kill -9 of the host", i, time.Since(start))
	}
}

// TestCloseRevokesEverySession: after Host.Close every session sees end-of-file or a
// NOT_STARTED authorization_revoked, the worker is gone within 200 ms, and the side-effect
// oracle shows no write after Close returned.
func TestCloseRevokesEverySession(t *testing.T) {
	h := startHost(t, Options{})
	dir := t.TempDir()
	const nSessions = 4
	sessions := make([]*Session, nSessions)
	for i := range sessions {
		sessions[i] = newSession(t, h, fmt.Sprintf("s%d", i))
	}

	type rec struct {
		marker string
		res    Result
		err    error
		sentAt time.Time
	}
	var mu sync.Mutex
	var recs []rec
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := filepath.Join(dir, fmt.Sprintf("s%d", i))
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				marker := fmt.Sprintf("s%d-%d", i, n)
				tool := "marker"
				args := map[string]any{"path": path, "marker": marker}
				if n%3 == 2 { // some calls are in flight for a while
					tool = "marker_after_sleep"
					args["ms"] = 20
				}
				sent := time.Now()
				res, err := s.Call(context.Background(), tool, mustJSON(args))
				mu.Lock()
				recs = append(recs, rec{marker, res, err, sent})
				mu.Unlock()
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	closeStart := time.Now()
	h.Close()
	closeDone := time.Now()
	if took, gone := waitGone(h.PID(), time.Second); !gone || closeDone.Sub(closeStart) > 200*time.Millisecond {
		t.Errorf("worker gone=%v; Close took %v (+%v), want ≤ 200ms", gone, closeDone.Sub(closeStart), took)
	}
	// Every call made after Close is refused as revoked.
	for i, s := range sessions {
		res, _ := s.Call(context.Background(), "marker", mustJSON(map[string]any{"path": filepath.Join(dir, "late"), "marker": fmt.Sprintf("late%d", i)}))
		if res.Outcome != NotStarted || res.Refusal == nil || res.Refusal.Code != "authorization_revoked" {
			t.Errorf("call after Close = %+v, want NOT_STARTED authorization_revoked", res)
		}
	}
	close(stop)
	wg.Wait()

	written := readMarkers(t, dir)
	snapshot := len(written)
	time.Sleep(50 * time.Millisecond)
	if again := readMarkers(t, dir); len(again) != snapshot {
		t.Errorf("marker files changed after Close: %d → %d lines", snapshot, len(again))
	}
	counts := map[string]int{}
	for _, r := range recs {
		counts[r.res.Outcome.String()]++
		switch r.res.Outcome {
		case Completed:
			if !written[r.marker] {
				t.Errorf("%s: COMPLETED but no marker", r.marker)
			}
		case NotStarted:
			if written[r.marker] {
				t.Errorf("%s: NOT_STARTED but the marker was written", r.marker)
			}
			if r.sentAt.After(closeDone) && (r.res.Refusal == nil || r.res.Refusal.Code != "authorization_revoked") {
				t.Errorf("%s: sent after Close, refusal %+v, want authorization_revoked", r.marker, r.res.Refusal)
			}
		case Unknown:
			if r.sentAt.After(closeDone) {
				t.Errorf("%s: sent after Close yet UNKNOWN", r.marker)
			}
		default:
			t.Errorf("%s: no outcome: %+v", r.marker, r.res)
		}
	}
	if written["late0"] || written["late1"] {
		t.Error("a call after Close wrote its marker")
	}
	t.Logf("outcomes: %v over %d calls", counts, len(recs))
}

func readMarkers(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l != "" {
				if out[l] {
					t.Errorf("marker %s written twice", l)
				}
				out[l] = true
			}
		}
	}
	return out
}

// TestStartCloseCycles: 200 start/close cycles leave no descriptors, goroutines or child
// processes behind.
func TestStartCloseCycles(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 20
	}
	// Warm up so lazily created runtime state is not counted as a leak.
	startHost(t, Options{}).Close()
	fdsBefore := countFDs(t)
	for i := range n {
		h, err := Start(context.Background(), Options{Logger: testLogger(t)})
		if err != nil {
			t.Fatalf("cycle %d: Start: %v", i, err)
		}
		if i%2 == 0 {
			s, err := h.CreateSession(context.Background(), SessionSpec{Label: "c"})
			if err != nil {
				t.Fatalf("cycle %d: CreateSession: %v", i, err)
			}
			if res, _ := s.Call(context.Background(), "noop", nil); res.Outcome != Completed {
				t.Fatalf("cycle %d: noop = %+v", i, res)
			}
		}
		h.Close()
	}
	if after := countFDs(t); after != fdsBefore {
		t.Errorf("descriptors: %d before, %d after %d cycles", fdsBefore, after, n)
	}
	if kids := children(t); len(kids) > 0 {
		t.Errorf("child processes left behind: %v", kids)
	}
}

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// children lists processes whose parent is this process (zombies included).
func children(t *testing.T) []string {
	t.Helper()
	me := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		var state string
		var ppid int
		if _, err := fmt.Sscanf(s[i+2:], "%s %d", &state, &ppid); err == nil && ppid == me {
			out = append(out, e.Name()+":"+state)
		}
	}
	return out
}

// TestSessionLifecycle covers labels, revocation and replies after revocation.
func TestSessionLifecycle(t *testing.T) {
	h := startHost(t, Options{})
	ctx := context.Background()
	a := newSession(t, h, "a")
	if _, err := h.CreateSession(ctx, SessionSpec{Label: "a"}); err == nil {
		t.Error("CreateSession with a duplicate label succeeded")
	}
	for _, bad := range []string{"", "has space", strings.Repeat("x", 129), "tab\t", "nb\u00a0sp", "line\u2028sep", "c1\u0085", "bidi\u202e", "bad\xffutf8"} {
		if _, err := h.CreateSession(ctx, SessionSpec{Label: bad}); err == nil {
			t.Errorf("CreateSession(%q) succeeded", bad)
		}
	}
	b := newSession(t, h, "b")
	if err := a.Revoke(ctx); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	if res, _ := a.Call(ctx, "noop", nil); res.Outcome != NotStarted || res.Refusal.Code != "authorization_revoked" {
		t.Errorf("call on revoked session = %+v", res)
	}
	if res, _ := b.Call(ctx, "noop", nil); res.Outcome != Completed {
		t.Errorf("call on the other session = %+v, want completed", res)
	}
	labels, err := h.RevokeAll(ctx)
	if err != nil || len(labels) != 1 || labels[0] != "b" {
		t.Errorf("RevokeAll = %v, %v; want [b]", labels, err)
	}
	// The label of a revoked session is free again once its channel closed.
	b.conn.Close()
	deadline := time.Now().Add(time.Second)
	for {
		_, err := h.CreateSession(ctx, SessionSpec{Label: "a"})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("label a never became free: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	var hr map[string]any
	s := newSession(t, h, "c")
	res, _ := s.Call(ctx, "get_session", nil)
	if err := json.Unmarshal(res.Structured, &hr); err != nil || hr["label"] != "c" || hr["mode"] != "standard" {
		t.Errorf("get_session = %s (%v)", res.Structured, err)
	}
}
