package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cua-host/cua-host/host/journal"
)

// TestJournalTask runs the README task with a journal: it verifies; flipping one byte of
// any record or screenshot makes verify fail and name the record; the worker and the
// proxy held no descriptor of the journal; the report shows every call.
func TestJournalTask(t *testing.T) {
	needDesktop(t)
	dir := filepath.Join(t.TempDir(), "journal")
	rp := startRun(t, append(append([]string(nil), unrestricted...), "--journal", dir)...)

	_, launched := rp.mustCall(t, "launch_app", map[string]any{"name": "xterm",
		"additional_arguments": []string{"-title", "cua-journal", "-e", "bash", "--norc", "--noprofile"}})
	pid := number(launched, "pid")
	ids, _ := launched["window_ids"].([]any)
	if pid <= 0 || len(ids) == 0 {
		t.Fatalf("launch_app xterm = %v", launched)
	}
	target := map[string]any{"pid": pid, "window_id": int(ids[0].(float64))}
	out := filepath.Join(t.TempDir(), "out.txt")
	rp.mustCall(t, "type_text", merge(target, map[string]any{"text": "echo hello-from-cua > " + out}))
	rp.mustCall(t, "press_key", merge(target, map[string]any{"key": "Return"}))
	if !waitFor(15*time.Second, func() bool { b, _ := os.ReadFile(out); return string(b) == "hello-from-cua\n" }) {
		t.Fatalf("the terminal did not write %s", out)
	}
	rp.mustCall(t, "get_desktop_state", map[string]any{})

	// Neither the worker nor the proxy holds anything of the journal.
	tree := descendants(rp.cmd.Process.Pid)
	for _, role := range []string{"__worker", "__mcp-proxy"} {
		p, ok := find(tree, role)
		if !ok {
			t.Fatalf("no %s process", role)
		}
		for _, target := range fdTargets(t, p.pid) {
			if strings.HasPrefix(target, dir) {
				t.Errorf("%s (pid %d) holds %s, inside the journal", role, p.pid, target)
			}
		}
	}
	if err := rp.close(); err != nil {
		t.Fatalf("cua-host run exit: %v", err)
	}

	if out, code := cua(t, "journal", "verify", dir); code != 0 {
		t.Fatalf("journal verify = %d, want 0:\n%s", code, out)
	}
	segs, err := journal.Segments(dir)
	if err != nil || len(segs) != 1 {
		t.Fatalf("Segments = %v, %v; want one", segs, err)
	}
	seg, err := journal.ReadSegment(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	shots := map[string]uint64{} // screenshot → first record naming it
	for _, r := range seg.Records {
		if r.Kind == journal.KindCallBegin || r.Kind == journal.KindCallReadOnly {
			tools = append(tools, r.Call.Tool)
			if r.Call.Tool == "type_text" && !strings.Contains(string(r.Call.Arguments), "redacted") {
				t.Errorf("type_text arguments %s: the text is not redacted", r.Call.Arguments)
			}
		}
		if r.Call != nil && r.Call.Screenshot != nil && r.Call.Screenshot.SHA256 != "" {
			if _, ok := shots[r.Call.Screenshot.SHA256]; !ok {
				shots[r.Call.Screenshot.SHA256] = r.Seq
			}
		}
	}
	if got, want := strings.Join(tools, " "), "launch_app type_text press_key get_desktop_state"; got != want {
		t.Errorf("calls begun = %s, want %s", got, want)
	}
	if len(shots) < 2 {
		t.Errorf("%d distinct screenshots, want before/after captures of the actions", len(shots))
	}

	// One flipped byte in any record or any screenshot fails verification and names it.
	file := filepath.Join(segs[0], journal.SegmentFile)
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(orig, []byte("\n"))
	var starts []int
	off := 0
	for _, l := range lines {
		if len(l) > 0 {
			starts = append(starts, off)
		}
		off += len(l)
	}
	for i, start := range starts {
		flipped := append([]byte(nil), orig...)
		pos := start + (len(lines[i])-1)*2/3 // inside the record's body
		flipped[pos] ^= 0x01
		if err := os.WriteFile(file, flipped, 0o600); err != nil {
			t.Fatal(err)
		}
		out, code := cua(t, "journal", "verify", dir)
		if want := "record " + strconv.Itoa(i+1); code != 1 || !strings.Contains(out, "TAMPERED: "+want+":") && !strings.Contains(out, "TAMPERED: "+want+" (") {
			t.Errorf("byte %d of record %d flipped: verify = %d %q, want 1 naming %s", pos, i+1, code, out, want)
		}
	}
	if err := os.WriteFile(file, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	for sha, seq := range shots {
		p := filepath.Join(segs[0], journal.ShotsDir, sha+".png")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, 0o600)
		b[len(b)/2] ^= 0x80
		os.WriteFile(p, b, 0o600)
		out, code := cua(t, "journal", "verify", dir)
		if want := "record " + strconv.Itoa(int(seq)); code != 1 || !strings.Contains(out, want) {
			t.Errorf("screenshot %.12s flipped: verify = %d %q, want 1 naming %s", sha, code, out, want)
		}
		b[len(b)/2] ^= 0x80
		os.WriteFile(p, b, 0o400)
	}
	if out, code := cua(t, "journal", "verify", dir); code != 0 {
		t.Fatalf("journal verify after restoring = %d, want 0:\n%s", code, out)
	}

	report := filepath.Join(t.TempDir(), "report.html")
	if out, code := cua(t, "journal", "show", dir, "-o", report); code != 0 {
		t.Fatalf("journal show = %d: %s", code, out)
	}
	html, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"launch_app", "type_text", "press_key", "get_desktop_state", "data:image/png;base64,", "verified: intact and complete"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, bad := range []string{`src="http`, `href="http`, `src="//`, "@import", "url(http"} {
		if bytes.Contains(html, []byte(bad)) {
			t.Errorf("report refers to an external resource (%q)", bad)
		}
	}
	checkReportInBrowser(t, report, []string{"launch_app", "type_text", "press_key", "get_desktop_state"})
}

// TestJournalWorkerKilledMidCall: a worker SIGKILLed while a call runs leaves a journal
// that verifies as cut off, with that call's outcome unknown.
func TestJournalWorkerKilledMidCall(t *testing.T) {
	needDesktop(t)
	dir := filepath.Join(t.TempDir(), "journal")
	rp := startRun(t, append(append([]string(nil), unrestricted...), "--journal", dir, "--journal-screenshots=false")...)
	_, launched := rp.mustCall(t, "launch_app", map[string]any{"name": "xterm",
		"additional_arguments": []string{"-title", "cua-journal-kill", "-e", "bash", "--norc", "--noprofile"}})
	ids, _ := launched["window_ids"].([]any)
	if len(ids) == 0 {
		t.Fatalf("launch_app xterm = %v", launched)
	}
	target := map[string]any{"pid": number(launched, "pid"), "window_id": int(ids[0].(float64))}
	worker, ok := find(descendants(rp.cmd.Process.Pid), "__worker")
	if !ok {
		t.Fatal("no worker")
	}
	// More distinct characters off the keymap than the spare keycodes hold at once: typed
	// in batches with a pause before each keycode is reused, about a second of typing,
	// long enough to kill the worker in the middle.
	var sb strings.Builder
	for r := rune(0x4e00); r < 0x4e00+700; r++ {
		sb.WriteRune(r)
	}
	long := sb.String()
	var wg sync.WaitGroup
	wg.Add(1)
	var res string
	go func() {
		defer wg.Done()
		// The answer may be lost with the worker: `run` shuts down when its worker dies.
		r, err := rp.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "type_text", Arguments: merge(target, map[string]any{"text": long})})
		if err != nil {
			res = "no answer: " + err.Error()
			return
		}
		res = text(r)
	}()
	segs := waitSegment(t, dir)
	if !waitFor(10*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(segs, journal.SegmentFile))
		return bytes.Contains(b, []byte(`"kind":"call_begin"`)) && bytes.Contains(b, []byte(`"tool":"type_text"`))
	}) {
		t.Fatal("no call_begin for type_text")
	}
	if err := syscall.Kill(worker.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	t.Logf("type_text after the kill: %s", res)
	rp.close()

	out, code := cua(t, "journal", "verify", dir)
	if code != 1 || !strings.Contains(out, "CUT OFF") || !strings.Contains(out, "outcome unknown") || !strings.Contains(out, "type_text") {
		t.Fatalf("journal verify = %d:\n%s\nwant 1, cut off, type_text's outcome unknown", code, out)
	}
	t.Logf("journal verify:\n%s", out)
}

func merge(a, b map[string]any) map[string]any {
	m := map[string]any{}
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

// cua runs the cua-host binary and returns its combined output and exit code.
func cua(t testing.TB, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(cuaHost, args...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("cua-host %v: %v", args, err)
	}
	return b.String(), cmd.ProcessState.ExitCode()
}

func fdTargets(t testing.TB, pid int) []string {
	t.Helper()
	d := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(d)
	if err != nil {
		t.Fatalf("read %s: %v", d, err)
	}
	var out []string
	for _, e := range ents {
		if target, err := os.Readlink(d + "/" + e.Name()); err == nil {
			out = append(out, target)
		}
	}
	return out
}

func waitSegment(t testing.TB, dir string) string {
	t.Helper()
	var segs []string
	if !waitFor(10*time.Second, func() bool { segs, _ = journal.Segments(dir); return len(segs) == 1 }) {
		t.Fatalf("no journal segment in %s", dir)
	}
	return segs[0]
}
