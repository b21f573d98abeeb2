package host

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cua-host/cua-host/internal/procfs"
	"github.com/cua-host/cua-host/test/testkit"
)

// testLogger logs to the test's output at debug level when CUA_TEST_VERBOSE is set.
var testLogger = testkit.Logger

func startHost(t testing.TB, opts Options) *Host {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func newSession(t testing.TB, h *Host, label string) *Session {
	t.Helper()
	s, err := h.CreateSession(context.Background(), SessionSpec{Label: label})
	if err != nil {
		t.Fatalf("CreateSession(%q): %v", label, err)
	}
	return s
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// processGone reports whether pid no longer runs (absent, or a zombie).
func processGone(pid int) bool { return !procfs.Alive(pid) }

// waitGone waits up to limit for pid to go and returns how long it took.
func waitGone(pid int, limit time.Duration) (time.Duration, bool) {
	start := time.Now()
	for time.Since(start) < limit {
		if processGone(pid) {
			return time.Since(start), true
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Since(start), processGone(pid)
}
