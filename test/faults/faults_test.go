package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	maybeRunRoles() // the re-executed test binary becomes a worker or a proxy here
	if os.Getenv("GORACE") == "" {
		// Race-built workers otherwise sleep a second at exit (host/env_race.go).
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}

// TestFaultsSmoke runs a few fault rounds (two worker rounds, one proxy round) within the
// CI budget; long runs use the program.
func TestFaultsSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	tl := faultRun(t.Context(), options{duration: 10 * time.Second, seed: 7, sessions: 3, perSession: 2, proxy: true, maxRounds: 3})
	if tl.calls == 0 || len(tl.rounds) == 0 {
		t.Fatalf("no calls or rounds ran: %d calls, rounds %v", tl.calls, tl.rounds)
	}
	var proxyRounds int
	for k, v := range tl.rounds {
		if strings.Contains(k, "proxy") {
			proxyRounds += v
		}
	}
	if proxyRounds == 0 {
		t.Errorf("no proxy round ran: %v", tl.rounds)
	}
	for _, v := range tl.violations {
		t.Errorf("%s", v)
	}
}

func TestChildren(t *testing.T) {
	if kids := children(os.Getpid()); len(kids) != 0 {
		t.Errorf("children(self) = %v before any spawn", kids)
	}
	if s := procState(os.Getpid()); s != "R" && s != "S" {
		t.Errorf("procState(self) = %q", s)
	}
}
