package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/journal"
)

// TestJournalReplay records the README task with --journal-text, then replays the journal
// on a fresh private display: the terminal of the replay writes the file again (the
// oracle), and the report says each step completed with its targets mapped to the
// replay's. A copy of the journal with one byte changed is refused.
func TestJournalReplay(t *testing.T) {
	needDesktop(t)
	dir, out := recordEcho(t, "replayed-by-cua")

	res, code := cua(t, "replay", dir, "--display", "private", "--dangerously-bypass-approvals", "--max-wait", "500ms", "--hold", "5s")
	t.Logf("cua-host replay:\n%s", res)
	if code != 0 {
		t.Fatalf("replay = %d, want 0", code)
	}
	if !waitFor(15*time.Second, func() bool { b, _ := os.ReadFile(out); return string(b) == "replayed-by-cua\n" }) {
		t.Fatalf("the replay's terminal did not write %s", out)
	}
	for _, want := range []string{"launch_app", "type_text", "press_key", "completed", "pid ", "window ", "replayed: 3 step(s) ran, all completed"} {
		if !strings.Contains(res, want) {
			t.Errorf("replay report lacks %q", want)
		}
	}

	// A journal whose chain does not verify is not replayed.
	tampered := filepath.Join(t.TempDir(), "tampered")
	copyJournal(t, dir, tampered)
	segs, err := journal.Segments(tampered)
	if err != nil || len(segs) != 1 {
		t.Fatalf("Segments = %v, %v", segs, err)
	}
	file := filepath.Join(segs[0], journal.SegmentFile)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), "replayed-by-cua", "replayed-by-cUa", 1))
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	res, code = cua(t, "replay", tampered, "--display", "private", "--dangerously-bypass-approvals")
	if code != 2 || !strings.Contains(res, "does not verify") || !strings.Contains(res, "record ") {
		t.Errorf("replay of a tampered journal = %d %q, want 2, naming the record that does not verify", code, res)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("after the refused replay: %v", err)
	}
}

// TestJournalReplayRedacted: a journal kept without --journal-text cannot be replayed:
// the refusal names the type_text step whose text was redacted, and nothing runs.
func TestJournalReplayRedacted(t *testing.T) {
	needDesktop(t)
	dir := filepath.Join(t.TempDir(), "journal")
	rp := startRun(t, append(append([]string(nil), unrestricted...), "--journal", dir, "--journal-screenshots=false")...)
	_, launched := rp.mustCall(t, "launch_app", map[string]any{"name": "xterm",
		"additional_arguments": []string{"-title", "cua-replay-redacted", "-e", "bash", "--norc", "--noprofile"}})
	ids, _ := launched["window_ids"].([]any)
	if len(ids) == 0 {
		t.Fatalf("launch_app xterm = %v", launched)
	}
	target := map[string]any{"pid": number(launched, "pid"), "window_id": int(ids[0].(float64))}
	rp.mustCall(t, "type_text", merge(target, map[string]any{"text": "true"}))
	if err := rp.close(); err != nil {
		t.Fatalf("cua-host run exit: %v", err)
	}
	res, code := cua(t, "replay", dir, "--display", "private", "--dangerously-bypass-approvals")
	if code != 2 || !strings.Contains(res, "step 2 (record ") || !strings.Contains(res, "type_text") || !strings.Contains(res, "redacted") || strings.Contains(res, "replaying") {
		t.Errorf("replay of a redacted journal = %d %q, want 2 naming step 2 type_text as redacted, before anything runs", code, res)
	}
}

func copyJournal(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if fi.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// recordEcho records a journal (with its text) of a run on a private display in which a
// terminal the session launched writes word to a file, checks the file, removes it and
// returns the journal's directory and the file's path: a replay writes the file again.
func recordEcho(t *testing.T, word string) (dir, out string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "journal")
	rp := startRun(t, append(append([]string(nil), unrestricted...), "--journal", dir, "--journal-text", "--journal-screenshots=false")...)
	_, launched := rp.mustCall(t, "launch_app", map[string]any{"name": "xterm",
		"additional_arguments": []string{"-title", "cua-replay", "-e", "bash", "--norc", "--noprofile"}})
	ids, _ := launched["window_ids"].([]any)
	if len(ids) == 0 {
		t.Fatalf("launch_app xterm = %v", launched)
	}
	target := map[string]any{"pid": number(launched, "pid"), "window_id": int(ids[0].(float64))}
	out = filepath.Join(t.TempDir(), "out.txt")
	rp.mustCall(t, "type_text", merge(target, map[string]any{"text": "echo " + word + " > " + out}))
	rp.mustCall(t, "press_key", merge(target, map[string]any{"key": "Return"}))
	if !waitFor(15*time.Second, func() bool { b, _ := os.ReadFile(out); return string(b) == word+"\n" }) {
		t.Fatalf("the terminal did not write %s", out)
	}
	rp.mustCall(t, "get_desktop_state", map[string]any{})
	if err := rp.close(); err != nil {
		t.Fatalf("cua-host run exit: %v", err)
	}
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	return dir, out
}
