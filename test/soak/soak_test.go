package main

import (
	"os"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	maybeRunWorker() // the re-executed test binary becomes a worker here
	if os.Getenv("GORACE") == "" {
		// Race-built workers otherwise sleep a second at exit (host/env_race.go).
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}

// TestSoakSmoke runs the soak briefly (too short to judge growth) and checks that the
// load behaves and the sampler reads both processes.
func TestSoakSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	rep, err := soak(t.Context(), options{duration: 1500 * time.Millisecond, sessions: 4, interval: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.calls == 0 || len(rep.samples) < 3 {
		t.Fatalf("soak made %d calls and %d samples", rep.calls, len(rep.samples))
	}
	for _, s := range rep.samples {
		if s.wFDs <= 0 || s.wGoroutines <= 0 || s.wRSSKiB <= 0 || s.hFDs <= 0 || s.hRSSKiB <= 0 {
			t.Errorf("sample %+v has a missing figure", s)
		}
	}
	for _, p := range rep.problems {
		t.Errorf("%s", p)
	}
}

func TestCheckGrowth(t *testing.T) {
	flat := make([]sample, 10)
	for i := range flat {
		flat[i] = sample{wFDs: 20, wGoroutines: 50, wThreads: 8, wRSSKiB: 20000, hFDs: 30, hGoroutines: 20, hThreads: 8, hRSSKiB: 20000}
	}
	if g := checkGrowth(flat); len(g) != 0 {
		t.Errorf("checkGrowth(flat) = %q, want none", g)
	}
	leak := append([]sample(nil), flat...)
	for i := range leak {
		leak[i].wFDs = 20 + 3*i
	}
	if g := checkGrowth(leak); len(g) != 1 {
		t.Errorf("checkGrowth(fd leak) = %q, want one finding", g)
	}
	if g := checkGrowth(flat[:3]); len(g) != 1 {
		t.Errorf("checkGrowth(3 samples) = %q, want the too-few finding", g)
	}
}
