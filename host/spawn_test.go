package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cua-host/cua-host/proto/contract"
)

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestPinnedWorker: with a SHA-256 pin the host executes the descriptor it hashed: the
// worker runs, and its /proc/PID/exe is the pinned file. A wrong pin starts nothing.
func TestPinnedWorker(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sum := fileSHA256(t, exe)
	h := startHost(t, Options{WorkerPath: exe, WorkerArgs: []string{contract.WorkerSubcommand}, WorkerSHA256: sum})
	var want, got syscall.Stat_t
	if err := syscall.Stat(exe, &want); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat(fmt.Sprintf("/proc/%d/exe", h.PID()), &got); err != nil {
		t.Fatal(err)
	}
	if want.Ino != got.Ino || want.Dev != got.Dev {
		t.Errorf("worker runs inode %d, pinned file is inode %d", got.Ino, want.Ino)
	}
	s := newSession(t, h, "pinned")
	if res, _ := s.Call(context.Background(), "noop", nil); res.Outcome != Completed {
		t.Errorf("noop on pinned worker = %+v", res)
	}
	// The pinned descriptor does not stay open in the host.
	for fd, target := range fdTargets(t, os.Getpid()) {
		if fd >= spawnFDFloor && target == exe {
			t.Errorf("host still holds the pinned binary at fd %d", fd)
		}
	}

	before := countFDs(t)
	for _, bad := range []string{strings.Repeat("0", 64), "not-hex", sum[:10]} {
		if _, err := Start(context.Background(), Options{WorkerPath: exe, WorkerArgs: []string{contract.WorkerSubcommand}, WorkerSHA256: bad}); err == nil {
			t.Errorf("Start with pin %q succeeded", bad)
		}
	}
	if after := countFDs(t); after != before {
		t.Errorf("descriptors: %d before refused starts, %d after", before, after)
	}
	if kids := children(t); len(kids) > 1 { // the pinned worker above is still running
		t.Errorf("refused starts left children: %v", kids)
	}
}

// TestStartTimeout: a child that never answers Hello is killed and Start fails in time.
func TestStartTimeout(t *testing.T) {
	start := time.Now()
	_, err := Start(context.Background(), Options{WorkerPath: "/bin/sh", WorkerArgs: []string{"-c", "sleep 30"}, StartTimeout: 200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no Ready") {
		t.Fatalf("Start = %v, want a Ready timeout", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Start took %v", took)
	}
	if kids := children(t); len(kids) > 0 {
		t.Errorf("children left behind: %v", kids)
	}
}

// TestWorkerDiesBeforeReady: a worker that exits before Ready is noticed at once (its end
// of the control channel closes), not after the start timeout.
func TestWorkerDiesBeforeReady(t *testing.T) {
	start := time.Now()
	_, err := Start(context.Background(), Options{WorkerPath: "/bin/sh", WorkerArgs: []string{"-c", "exit 3"}})
	if err == nil {
		t.Fatal("Start succeeded with a worker that exits")
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Start noticed the dead worker after %v, want well under the 10 s timeout", took)
	}
	if kids := children(t); len(kids) > 0 {
		t.Errorf("children left behind: %v", kids)
	}
}

// recordingHandler keeps the records it handles.
type recordingHandler struct {
	mu   chan struct{}
	recs []slog.Record
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu <- struct{}{}
	h.recs = append(h.recs, r.Clone())
	<-h.mu
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

// TestWorkerLogsBecomeRecords: the worker's JSON log lines on stderr arrive in the host's
// logger as structured records with the worker's attributes.
func TestWorkerLogsBecomeRecords(t *testing.T) {
	rh := &recordingHandler{mu: make(chan struct{}, 1)}
	h, err := Start(context.Background(), Options{Logger: slog.New(rh), WorkerLogLevel: slog.LevelDebug})
	if err != nil {
		t.Fatal(err)
	}
	s, err := h.CreateSession(context.Background(), SessionSpec{Label: "logged"})
	if err != nil {
		t.Fatal(err)
	}
	s.Call(context.Background(), "noop", nil)
	h.Close() // drains the worker's stderr
	rh.mu <- struct{}{}
	defer func() { <-rh.mu }()
	for _, r := range rh.recs {
		if r.Message != "session created" {
			continue
		}
		var label string
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "worker" {
				for _, ga := range a.Value.Group() {
					if ga.Key == "label" {
						label = ga.Value.String()
					}
				}
			}
			return true
		})
		if label != "logged" {
			t.Errorf("worker record %q has label %q, want logged", r.Message, label)
		}
		return
	}
	t.Errorf("no worker record 'session created' among %d records", len(rh.recs))
}
