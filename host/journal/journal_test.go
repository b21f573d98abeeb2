package journal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func openTest(t *testing.T, opts Options) *Writer {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	w, err := Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { w.Close("test") })
	return w
}

var sess = &Session{ID: "s1", Label: "a", Mode: "standard"}

func appendCall(t *testing.T, w *Writer, kind Kind, seq uint64, png []byte) {
	t.Helper()
	c := &Call{Seq: seq, Tool: "click", Arguments: []byte(`{"x":1}`)}
	if png != nil {
		c.Screenshot = &Shot{Width: 2, Height: 2, Scale: 0.5}
	}
	if err := w.Append(Record{Kind: kind, Session: sess, Call: c}, png); err != nil {
		t.Fatalf("Append(%s): %v", kind, err)
	}
}

func TestWriteVerify(t *testing.T) {
	tests := []struct {
		name     string
		build    func(t *testing.T, w *Writer)
		close    bool
		ok       bool
		cutOff   string
		unknown  int
		problem  string
		tamperFn func(t *testing.T, dir string)
	}{
		{name: "complete", close: true, ok: true, build: func(t *testing.T, w *Writer) {
			w.Append(Record{Kind: KindSessionStart, Session: sess}, nil)
			appendCall(t, w, KindCallBegin, 1, []byte("png-before"))
			appendCall(t, w, KindCallEnd, 1, []byte("png-after"))
			w.Append(Record{Kind: KindSessionEnd, Session: sess, End: &End{Reason: ReasonRevoked}}, nil)
		}},
		{name: "cut off with a call in flight", unknown: 1, cutOff: "has no journal_end", build: func(t *testing.T, w *Writer) {
			w.Append(Record{Kind: KindSessionStart, Session: sess}, nil)
			appendCall(t, w, KindCallBegin, 1, nil)
		}},
		{name: "worker lost", close: true, cutOff: "worker was lost", build: func(t *testing.T, w *Writer) {
			w.Append(Record{Kind: KindSessionStart, Session: sess}, nil)
			w.Append(Record{Kind: KindSessionEnd, Session: sess, End: &End{Reason: ReasonWorkerLost}}, nil)
		}},
		{name: "record removed", close: true, problem: "record 3 (click): sequence number 4", build: func(t *testing.T, w *Writer) {
			w.Append(Record{Kind: KindSessionStart, Session: sess}, nil)
			appendCall(t, w, KindCallBegin, 1, nil)
			appendCall(t, w, KindCallEnd, 1, nil)
		}, tamperFn: func(t *testing.T, dir string) {
			editLines(t, dir, func(lines [][]byte) [][]byte { return append(lines[:2:2], lines[3:]...) })
		}},
		{name: "torn last line", problem: "torn write", build: func(t *testing.T, w *Writer) {
			w.Append(Record{Kind: KindSessionStart, Session: sess}, nil)
		}, tamperFn: func(t *testing.T, dir string) {
			f, _ := os.OpenFile(filepath.Join(dir, SegmentFile), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(`{"hash":"00`)
			f.Close()
		}},
		{name: "screenshot deleted", close: true, unknown: 1, problem: "record 3 (click): screenshot", build: func(t *testing.T, w *Writer) {
			w.Append(Record{Kind: KindSessionStart, Session: sess}, nil)
			appendCall(t, w, KindCallBegin, 1, []byte("png"))
		}, tamperFn: func(t *testing.T, dir string) {
			ents, _ := os.ReadDir(filepath.Join(dir, ShotsDir))
			for _, e := range ents {
				os.Remove(filepath.Join(dir, ShotsDir, e.Name()))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := openTest(t, Options{})
			tt.build(t, w)
			if tt.close {
				if err := w.Close("done"); err != nil {
					t.Fatal(err)
				}
			}
			if tt.tamperFn != nil {
				tt.tamperFn(t, w.Dir())
			}
			rep, err := Verify(filepath.Dir(w.Dir()))
			if err != nil {
				t.Fatal(err)
			}
			s := rep.Segments[0]
			if rep.OK() != tt.ok {
				t.Errorf("OK = %v, want %v (%+v)", rep.OK(), tt.ok, s)
			}
			if tt.cutOff != "" && !strings.Contains(s.CutOff, tt.cutOff) {
				t.Errorf("CutOff = %q, want %q", s.CutOff, tt.cutOff)
			}
			if len(s.Unknown) != tt.unknown {
				t.Errorf("Unknown = %+v, want %d", s.Unknown, tt.unknown)
			}
			if tt.problem != "" && (len(s.Problems) == 0 || !strings.Contains(s.Problems[0].String(), tt.problem)) {
				t.Errorf("Problems = %v, want the first to contain %q", s.Problems, tt.problem)
			}
		})
	}
}

func editLines(t *testing.T, dir string, f func([][]byte) [][]byte) {
	t.Helper()
	p := filepath.Join(dir, SegmentFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	if err := os.WriteFile(p, bytes.Join(f(lines), nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestPruneOldestShots: beyond the budget the oldest screenshots go, a prune record says
// so, and the journal still verifies.
func TestPruneOldestShots(t *testing.T) {
	w := openTest(t, Options{MaxShots: 2})
	w.Append(Record{Kind: KindSessionStart, Session: sess}, nil)
	for i := 1; i <= 4; i++ {
		appendCall(t, w, KindCallBegin, uint64(i), []byte{byte(i)})
	}
	w.Close("done")
	ents, _ := os.ReadDir(filepath.Join(w.Dir(), ShotsDir))
	if len(ents) != 2 {
		t.Errorf("%d screenshots kept, want 2", len(ents))
	}
	rep, err := Verify(w.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Segments[0].Intact {
		t.Errorf("after pruning: %+v, want intact", rep.Segments[0])
	}
	b, _ := os.ReadFile(filepath.Join(w.Dir(), SegmentFile))
	if n := bytes.Count(b, []byte(`"kind":"prune"`)); n != 2 {
		t.Errorf("%d prune records, want 2", n)
	}
}

// TestBrokenWriterRefuses: after a write error nothing more is appended.
func TestBrokenWriterRefuses(t *testing.T) {
	fail := &failingFile{}
	w := openTest(t, Options{file: func(f *os.File) appendFile { fail.File = f; return fail }})
	fail.fail = true
	err := w.Append(Record{Kind: KindSessionStart, Session: sess}, nil)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Append on a full disk = %v, want ErrUnavailable", err)
	}
	fail.fail = false
	if err := w.Append(Record{Kind: KindSessionStart, Session: sess}, nil); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Append after a failure = %v, want ErrUnavailable", err)
	}
}

type failingFile struct {
	*os.File
	fail bool
}

func (f *failingFile) Write(p []byte) (int, error) {
	if f.fail {
		return 3, errors.New("no space left on device")
	}
	return f.File.Write(p)
}

func TestDecodeLineRoundTrip(t *testing.T) {
	r := &Record{Seq: 1, Segment: "x", Time: time.Unix(0, 0).UTC().Format(time.RFC3339Nano), Kind: KindJournalStart, Start: &Start{}}
	line, hash, err := EncodeLine(r)
	if err != nil {
		t.Fatal(err)
	}
	l, err := DecodeLine(bytes.TrimSuffix(line, []byte("\n")))
	if err != nil || l.Hash != hash || l.Record.Kind != KindJournalStart {
		t.Fatalf("DecodeLine(EncodeLine) = %+v, %v", l, err)
	}
}

// FuzzDecodeLine: no input makes the decoder panic, and whatever it accepts re-encodes
// to a line with the same hash.
func FuzzDecodeLine(f *testing.F) {
	r := &Record{Seq: 2, Prev: strings.Repeat("a", 64), Segment: "s", Time: "t", Kind: KindCallBegin,
		Session: &Session{ID: "i", Label: "l"}, Call: &Call{Seq: 1, Tool: "click", Arguments: []byte(`{"x":1}`), Screenshot: &Shot{SHA256: strings.Repeat("b", 64)}}}
	line, _, _ := EncodeLine(r)
	f.Add(bytes.TrimSuffix(line, []byte("\n")))
	start := &Record{Seq: 1, Segment: "s", Time: "t", Kind: KindJournalStart, Start: &Start{Format: Format,
		Chain: &Chain{Number: 2, Prev: "p", PrevRecords: 5, PrevHead: strings.Repeat("c", 64), PrevOpen: true}}}
	line, _, _ = EncodeLine(start)
	f.Add(bytes.TrimSuffix(line, []byte("\n")))
	f.Add([]byte(`{"hash":"","record":{}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := DecodeLine(b)
		if err != nil {
			return
		}
		if l.Record.Seq == 0 || !l.Record.Kind.valid() {
			t.Fatalf("accepted a record with seq %d kind %q", l.Record.Seq, l.Record.Kind)
		}
	})
}

// TestCreditsReserveSpace: a grant reserves blocks beyond the end of the segment file
// without changing its size; on a full disk credited records still land in that room while
// a general record that would eat into it is refused (ErrFull, the writer not broken);
// Close gives the room back.
func TestCreditsReserveSpace(t *testing.T) {
	w := openTest(t, Options{})
	file := filepath.Join(w.Dir(), SegmentFile)
	if err := w.Append(Record{Kind: KindSessionStart, Session: sess}, nil); err != nil {
		t.Fatal(err)
	}
	size0 := fileSize(t, file)
	if err := w.Grant(4); err != nil {
		t.Skipf("this file system cannot reserve space: %v", err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(file, &st); err != nil {
		t.Fatal(err)
	}
	if st.Blocks*512 < 4*CreditRecordBytes+closeMargin || st.Size != size0 {
		t.Fatalf("after Grant(4): %d bytes allocated, size %d; want ≥ %d allocated, size %d", st.Blocks*512, st.Size, 4*CreditRecordBytes+closeMargin, size0)
	}
	w.Fill(syscall.ENOSPC)
	// General records fill the room that is not promised, then are refused.
	var refused error
	for i := 0; i < 100000 && refused == nil; i++ {
		refused = w.Append(Record{Kind: KindCallReadOnly, Session: sess, Call: &Call{Seq: uint64(i), Tool: "noop", Arguments: []byte(`{"pad":"` + strings.Repeat("x", 4000) + `"}`)}}, nil)
	}
	if !errors.Is(refused, ErrFull) || w.Err() != nil {
		t.Fatalf("general append on a full disk = %v (writer: %v), want ErrFull and not broken", refused, w.Err())
	}
	for i := range 4 {
		if err := w.AppendCredited(Record{Kind: KindCallBegin, Session: sess, Call: &Call{Seq: uint64(1000 + i), Tool: "click", Arguments: []byte(`{"x":1}`)}}, nil); err != nil {
			t.Fatalf("credited append %d on a full disk: %v", i, err)
		}
	}
	if w.Credits() != 0 {
		t.Errorf("Credits = %d after spending 4, want 0", w.Credits())
	}
	if err := w.Grant(8); err == nil {
		t.Error("Grant(8) on a full disk succeeded, beyond the room left")
	}
	if err := w.AppendClosing(Record{Kind: KindSessionEnd, Session: sess, End: &End{Reason: ReasonHostClosed}}); err != nil {
		t.Fatalf("closing append on a full disk: %v", err)
	}
	if err := w.Close("test"); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := syscall.Stat(file, &st); err != nil {
		t.Fatal(err)
	}
	if st.Blocks*512 > st.Size+64<<10 {
		t.Errorf("after Close: %d bytes allocated for %d bytes: the reservation was not given back", st.Blocks*512, st.Size)
	}
	rep, err := Verify(filepath.Dir(w.Dir()))
	if err != nil || !rep.Segments[0].Intact || len(rep.Segments[0].Unknown) != 4 {
		t.Fatalf("Verify = %+v, %v; want intact, the 4 begun calls without an outcome", rep, err)
	}
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
