package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/journal"
	"github.com/cua-host/cua-host/policy"
)

func readJournal(t *testing.T, h *Host) *journal.Segment {
	t.Helper()
	seg, err := journal.ReadSegment(h.JournalDir())
	if err != nil {
		t.Fatalf("ReadSegment: %v", err)
	}
	return seg
}

func kinds(seg *journal.Segment) string {
	var ks []string
	for _, r := range seg.Records {
		k := string(r.Kind)
		if r.Call != nil {
			k += ":" + r.Call.Tool
			if r.Call.Outcome != "" {
				k += ":" + r.Call.Outcome
			}
		}
		ks = append(ks, k)
	}
	return strings.Join(ks, " ")
}

func TestJournalRecordsCalls(t *testing.T) {
	dir := t.TempDir()
	set, err := policy.LoadLayers("", writeFile(t, "deny.yaml", "allow:\n  tools: [noop, marker]\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := startHost(t, Options{Journal: &JournalOptions{Dir: dir}, Policy: set})
	s := newSession(t, h, "j1")
	marker := filepath.Join(t.TempDir(), "m")
	for _, c := range []struct {
		tool string
		args any
	}{
		{"noop", nil},
		{"marker", map[string]any{"path": marker, "marker": "one"}},
		{"sleep", map[string]any{"ms": 1}}, // refused by the policy
	} {
		if _, err := s.Call(t.Context(), c.tool, mustJSON(c.args)); err != nil {
			t.Fatalf("Call(%s): %v", c.tool, err)
		}
	}
	h.Close()

	rep, err := journal.Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("Verify = %+v, want intact and complete", rep.Segments)
	}
	seg := readJournal(t, h)
	want := "journal_start session_start call_read_only:noop:completed call_begin:marker call_end:marker:completed call_refused:sleep:not_started session_end journal_end"
	if got := kinds(seg); got != want {
		t.Errorf("records = %s\nwant      %s", got, want)
	}
	ref := seg.Records[5].Call
	if ref.Refusal == nil || ref.Refusal.Code != "permission_denied" || ref.Layer != "policy:user" || ref.Decision != "deny" {
		t.Errorf("refused call = %+v, want permission_denied by policy:user", ref)
	}
	for _, r := range seg.Records[1 : len(seg.Records)-1] {
		if r.Session == nil || r.Session.Label != "j1" || r.Session.ID == "" {
			t.Errorf("record %d session = %+v, want label j1 with an id", r.Seq, r.Session)
		}
	}
}

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestJournalWorkerKilledMidCall: the worker dies while a call runs; the journal is intact,
// cut off, and names the in-flight call's outcome unknown.
func TestJournalWorkerKilledMidCall(t *testing.T) {
	dir := t.TempDir()
	h := startHost(t, Options{Journal: &JournalOptions{Dir: dir}})
	s := newSession(t, h, "k")
	done := make(chan Result, 1)
	go func() {
		res, _ := s.Call(context.Background(), "sleep", mustJSON(map[string]any{"ms": 5000}))
		done <- res
	}()
	waitRecords(t, h, journal.KindCallBegin)
	h.proc.killGroup()
	res := <-done
	if res.Outcome != Unknown {
		t.Errorf("outcome = %v, want unknown", res.Outcome)
	}
	h.Close()
	rep, err := journal.Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	sr := rep.Segments[0]
	if !sr.Intact || sr.Complete || !strings.Contains(sr.CutOff, "cut off") {
		t.Fatalf("report = %+v, want intact and cut off", sr)
	}
	if len(sr.Unknown) != 1 || sr.Unknown[0].Tool != "sleep" {
		t.Errorf("unknown = %+v, want the sleep call", sr.Unknown)
	}
}

func waitRecords(t *testing.T, h *Host, kind journal.Kind) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(filepath.Join(h.JournalDir(), journal.SegmentFile))
		if strings.Contains(string(b), `"kind":"`+string(kind)+`"`) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no %s record within 5 s", kind)
}

// TestJournalUnavailableRefuses: once the journal cannot write, calls are refused
// journal_unavailable and do not run (Synchronous: every action waits for its record, so
// even a write that fails for another reason than a full disk refuses the action).
func TestJournalUnavailableRefuses(t *testing.T) {
	dir := t.TempDir()
	h := startHost(t, Options{Journal: &JournalOptions{Dir: dir, Synchronous: true}})
	s := newSession(t, h, "u")
	h.journal.w.Break(os.ErrPermission) // as a full disk would
	marker := filepath.Join(t.TempDir(), "m")
	res, err := s.Call(t.Context(), "marker", mustJSON(map[string]any{"path": marker, "marker": "x"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != NotStarted || res.Refusal == nil || res.Refusal.Code != "journal_unavailable" {
		t.Fatalf("result = %+v, want not_started journal_unavailable", res)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the marker file exists (%v): the call ran without a record", err)
	}
}

// TestJournalNoDescriptorInWorker: the worker holds no descriptor of the journal.
func TestJournalNoDescriptorInWorker(t *testing.T) {
	dir := t.TempDir()
	h := startHost(t, Options{Journal: &JournalOptions{Dir: dir}})
	s := newSession(t, h, "fd")
	if _, err := s.Call(t.Context(), "noop", nil); err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(h.PID()), "fd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range fds {
		target, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(h.PID()), "fd", e.Name()))
		if err == nil && strings.HasPrefix(target, dir) {
			t.Errorf("worker fd %s points at %s, inside the journal", e.Name(), target)
		}
	}
}

// TestJournalFullDiskWithCredits: actions run against credits, without waiting for their
// begin record; when the disk fills, every action that ran is still in the journal (its
// record's room was reserved before the credit was granted), the rest are refused
// journal_unavailable, and the segment verifies.
func TestJournalFullDiskWithCredits(t *testing.T) {
	dir := t.TempDir()
	h := startHost(t, Options{Journal: &JournalOptions{Dir: dir}})
	s := newSession(t, h, "full")
	marker := filepath.Join(t.TempDir(), "m")
	call := func(i int) Result {
		res, err := s.Call(t.Context(), "marker", mustJSON(map[string]any{"path": marker, "marker": "m" + strconv.Itoa(i)}))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for i := range 10 {
		if res := call(i); res.Outcome != Completed {
			t.Fatalf("call %d before the disk filled = %+v", i, res)
		}
	}
	if h.journal.w.Credits() == 0 {
		t.Fatal("the host granted no credits")
	}
	h.journal.w.Fill(syscall.ENOSPC)
	// The reservation outlasts the credits: the calls go on until its room is used up.
	var ran, refused int
	for i := 10; i < 20000 && refused < 20; i++ {
		res := call(i)
		switch {
		case res.Outcome == Completed:
			ran++
		case res.Outcome == NotStarted && res.Refusal != nil && res.Refusal.Code == "journal_unavailable":
			refused++
		default:
			t.Fatalf("call %d = %+v", i, res)
		}
	}
	if ran == 0 || refused == 0 {
		t.Errorf("after the disk filled: %d ran, %d refused; want both (credits spent, then refusals)", ran, refused)
	}
	h.Close()

	b, _ := os.ReadFile(marker)
	lines := strings.Fields(string(b))
	seg := readJournal(t, h)
	begun := map[string]bool{}
	for _, r := range seg.Records {
		if r.Kind == journal.KindCallBegin {
			var a struct{ Marker string }
			if err := json.Unmarshal(r.Call.Arguments, &a); err != nil {
				t.Fatal(err)
			}
			begun[a.Marker] = true
		}
	}
	for _, m := range lines {
		if !begun[m] {
			t.Errorf("marker %s was written by an action the journal has no begin record of", m)
		}
	}
	if len(lines) != 10+ran {
		t.Errorf("%d markers written, want %d", len(lines), 10+ran)
	}
	rep, err := journal.Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Segments) != 1 || !rep.Segments[0].Intact {
		t.Fatalf("Verify = %+v, want an intact segment", rep.Segments)
	}
	t.Logf("after the disk filled: %d actions ran (all recorded), %d refused; segment: %s", ran, refused, rep.Segments[0].CutOff)
}
