package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// writeSegment opens a segment in dir, records a session with one read-only call, and
// closes it in order unless open is set (then the caller closes it).
func writeSegment(t *testing.T, dir string, open bool) *Writer {
	t.Helper()
	w, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { w.Close("test") })
	for _, r := range []Record{
		{Kind: KindSessionStart, Session: sess},
		{Kind: KindCallReadOnly, Session: sess, Call: &Call{Seq: 1, Tool: "list_windows", Outcome: "completed"}},
		{Kind: KindSessionEnd, Session: sess, End: &End{Reason: ReasonRevoked}},
	} {
		if err := w.Append(r, nil); err != nil {
			t.Fatalf("Append(%s): %v", r.Kind, err)
		}
	}
	if !open {
		if err := w.Close("done"); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	return w
}

// writeJournal writes a journal of n segments, one after the other, and returns its
// directory and the segments' directories, oldest first.
func writeJournal(t *testing.T, n int) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	var segs []string
	for range n {
		segs = append(segs, writeSegment(t, dir, false).Dir())
	}
	return dir, segs
}

// forge rewrites the segment in segDir as a process that can write the files can: edit
// changes its records, which are then renumbered, chained and hashed again under the name
// name (the directory is renamed to it).
func forge(t testing.TB, segDir, name string, edit func([]Record) []Record) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(segDir, SegmentFile))
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	for _, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		l, err := DecodeLine(line)
		if err != nil {
			t.Fatalf("forge: %v", err)
		}
		recs = append(recs, l.Record)
	}
	if edit != nil {
		recs = edit(recs)
	}
	var out bytes.Buffer
	prev := ""
	for i := range recs {
		recs[i].Seq, recs[i].Prev, recs[i].Segment = uint64(i+1), prev, name
		line, hash, err := EncodeLine(&recs[i])
		if err != nil {
			t.Fatal(err)
		}
		out.Write(line)
		prev = hash
	}
	to := filepath.Join(filepath.Dir(segDir), name)
	if to != segDir {
		if err := os.Rename(segDir, to); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(to, SegmentFile), out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return to
}

func unchain(recs []Record) []Record {
	recs[0].Start.Format, recs[0].Start.Chain = 2, nil
	return recs
}

func TestChain(t *testing.T) {
	base := filepath.Base
	tests := []struct {
		name     string
		segments int
		// attack changes the segments (their directories, oldest first) and returns, for
		// each segment that must then fail, words its first problem must contain; every
		// other segment must verify.
		attack func(t *testing.T, segs []string) map[string][]string
	}{
		{name: "intact", segments: 3, attack: func(t *testing.T, segs []string) map[string][]string {
			return nil
		}},
		{name: "middle segment deleted", segments: 3, attack: func(t *testing.T, segs []string) map[string][]string {
			os.RemoveAll(segs[1])
			return map[string][]string{base(segs[2]): {"record 1: the segment before this one, " + base(segs[1]) + " (number 2), is missing: deleted or moved"}}
		}},
		{name: "only the records file of a middle segment deleted", segments: 3, attack: func(t *testing.T, segs []string) map[string][]string {
			os.Remove(filepath.Join(segs[1], SegmentFile))
			return map[string][]string{base(segs[2]): {base(segs[1]) + " (number 2), is missing"}}
		}},
		{name: "first segment deleted", segments: 3, attack: func(t *testing.T, segs []string) map[string][]string {
			os.RemoveAll(segs[0])
			return map[string][]string{base(segs[1]): {base(segs[0]) + " (number 1, the journal's first), is missing"}}
		}},
		{name: "two first segments deleted", segments: 3, attack: func(t *testing.T, segs []string) map[string][]string {
			os.RemoveAll(segs[0])
			os.RemoveAll(segs[1])
			return map[string][]string{base(segs[2]): {"segments number 1 to 2 are missing, the journal's first: deleted or moved; the last of them, before this one, is " + base(segs[1])}}
		}},
		{name: "two middle segments deleted", segments: 4, attack: func(t *testing.T, segs []string) map[string][]string {
			os.RemoveAll(segs[1])
			os.RemoveAll(segs[2])
			return map[string][]string{base(segs[3]): {"segments number 2 to 3 are missing: deleted or moved; the last of them, before this one, is " + base(segs[2])}}
		}},
		{name: "newest segment deleted: the files cannot show it", segments: 3, attack: func(t *testing.T, segs []string) map[string][]string {
			os.RemoveAll(segs[2])
			return nil
		}},
		{name: "two segments' directories swapped", segments: 3, attack: func(t *testing.T, segs []string) map[string][]string {
			tmp := segs[1] + ".tmp"
			os.Rename(segs[1], tmp)
			os.Rename(segs[2], segs[1])
			os.Rename(tmp, segs[2])
			return map[string][]string{
				base(segs[1]): {"record 1: belongs to segment \"" + base(segs[2]) + "\""},
				base(segs[2]): {"record 1: belongs to segment \"" + base(segs[1]) + "\""},
			}
		}},
		{name: "two segments swapped and rewritten under each other's names", segments: 3, attack: func(t *testing.T, segs []string) map[string][]string {
			tmp := filepath.Join(filepath.Dir(segs[1]), "tmp")
			os.Rename(segs[1], tmp)
			forge(t, segs[2], base(segs[1]), nil)
			forge(t, tmp, base(segs[2]), nil)
			return map[string][]string{
				base(segs[1]): {"record 1: names itself as the segment before it"},
				base(segs[2]): {"record 1: follows segment " + base(segs[0]) + ", but segment " + base(segs[1]) + " comes between them"},
			}
		}},
		{name: "a segment moved before the one it follows", segments: 3, attack: func(t *testing.T, segs []string) map[string][]string {
			moved := "0" + base(segs[1])
			forge(t, segs[1], moved, nil)
			return map[string][]string{
				moved:         {"record 1: follows segment " + base(segs[0]) + ", which is listed after it"},
				base(segs[0]): {"record 1: begins a journal (segment number 1), but segment " + moved + " comes before it"},
				base(segs[2]): {base(segs[1]) + " (number 2), is missing"},
			}
		}},
		{name: "a segment of another journal inserted", segments: 2, attack: func(t *testing.T, segs []string) map[string][]string {
			name := base(segs[0]) + "x"
			other := forge(t, writeSegment(t, t.TempDir(), false).Dir(), name, nil)
			os.Rename(other, filepath.Join(filepath.Dir(segs[0]), name))
			return map[string][]string{
				name:          {"begins a journal (segment number 1), but segment " + base(segs[0]) + " comes before it"},
				base(segs[1]): {"follows segment " + base(segs[0]) + ", but segment " + name + " comes between them"},
			}
		}},
		{name: "segment torn in the middle of a record", segments: 3, attack: func(t *testing.T, segs []string) map[string][]string {
			p := filepath.Join(segs[1], SegmentFile)
			os.Truncate(p, fileSize(t, p)-20)
			return map[string][]string{base(segs[1]): {"record 5: the last line is incomplete (a torn write)"}}
		}},
		{name: "records cut off the end of a segment, whole lines", segments: 3, attack: func(t *testing.T, segs []string) map[string][]string {
			editLines(t, segs[1], func(lines [][]byte) [][]byte { return lines[:3] })
			return map[string][]string{base(segs[1]): {"its last 2 record(s) were removed: segment " + base(segs[2]) + " began after its record 5", "and it ends at record 3"}}
		}},
		{name: "records cut off and the end forged", segments: 3, attack: func(t *testing.T, segs []string) map[string][]string {
			forge(t, segs[1], base(segs[1]), func(r []Record) []Record { return append(r[:2], r[4]) })
			return map[string][]string{base(segs[1]): {"its last 2 record(s) were removed"}}
		}},
		{name: "a segment rewritten consistently", segments: 3, attack: func(t *testing.T, segs []string) map[string][]string {
			forge(t, segs[1], base(segs[1]), func(r []Record) []Record { r[2].Call.Tool = "get_desktop_state"; return r })
			return map[string][]string{base(segs[1]): {"record 5: does not match the head segment " + base(segs[2]) + " recorded for it when it began", "rewritten"}}
		}},
		{name: "a link rewritten to skip a deleted segment", segments: 3, attack: func(t *testing.T, segs []string) map[string][]string {
			os.RemoveAll(segs[1])
			forge(t, segs[2], base(segs[2]), func(r []Record) []Record {
				r[0].Start.Chain.Prev = base(segs[0])
				return r
			})
			return map[string][]string{base(segs[2]): {"record 1: is segment number 3, but the segment before it, " + base(segs[0]) + ", is number 1"}}
		}},
		{name: "written by an older version", segments: 3, attack: func(t *testing.T, segs []string) map[string][]string {
			for _, s := range segs {
				forge(t, s, base(s), unchain)
			}
			os.RemoveAll(segs[1]) // cannot be detected
			return nil
		}},
		{name: "an unchained segment after a chained one", segments: 3, attack: func(t *testing.T, segs []string) map[string][]string {
			forge(t, segs[2], base(segs[2]), unchain)
			return map[string][]string{base(segs[2]): {"record 1: has no link to the segment before it, though " + base(segs[1]) + " before it has one"}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, segs := writeJournal(t, tt.segments)
			want := tt.attack(t, segs)
			rep, err := Verify(dir)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if ok := len(want) == 0; rep.OK() != ok {
				t.Fatalf("Verify().OK() = %v, want %v: %+v", rep.OK(), ok, rep.Segments)
			}
			seen := 0
			for _, s := range rep.Segments {
				words, bad := want[s.ID]
				if !bad {
					if !s.OK() {
						t.Errorf("segment %s: %v %s, want it to verify", s.ID, s.Problems, s.CutOff)
					}
					continue
				}
				seen++
				if s.Intact || len(s.Problems) == 0 {
					t.Errorf("segment %s intact, want a problem", s.ID)
					continue
				}
				for _, w := range words {
					if !strings.Contains(s.Problems[0].String(), w) {
						t.Errorf("segment %s: first problem %q, want it to contain %q", s.ID, s.Problems[0], w)
					}
				}
			}
			if seen != len(want) {
				t.Errorf("%d of the segments %v in the report: %+v", seen, want, rep.Segments)
			}
		})
	}
}

// TestChainLinks: each segment names the one before it, its record count and head; the
// first is number 1; segments written by an older version are marked unchained, and a new
// segment after them continues the count.
func TestChainLinks(t *testing.T) {
	dir, segs := writeJournal(t, 3)
	rep, err := Verify(dir)
	if err != nil || !rep.OK() {
		t.Fatalf("Verify = %+v, %v; want OK", rep, err)
	}
	for i, s := range rep.Segments {
		c := s.Chain
		if c == nil || c.Number != uint64(i+1) || s.Unchained {
			t.Fatalf("segment %d: chain %+v, unchained %v; want number %d", i, c, s.Unchained, i+1)
		}
		if i == 0 {
			if c.Prev != "" || c.PrevHead != "" {
				t.Errorf("segment 1: chain %+v, want no predecessor", c)
			}
			continue
		}
		p := rep.Segments[i-1]
		if c.Prev != filepath.Base(segs[i-1]) || c.PrevRecords != uint64(p.Records) || c.PrevHead != p.Head || c.PrevOpen {
			t.Errorf("segment %d: chain %+v, want it to name %s with %d records, head %s", i+1, c, p.ID, p.Records, p.Head)
		}
	}

	for _, s := range segs {
		forge(t, s, filepath.Base(s), unchain)
	}
	w := writeSegment(t, dir, false)
	rep, err = Verify(dir)
	if err != nil || !rep.OK() {
		t.Fatalf("after older segments: Verify = %+v, %v; want OK", rep, err)
	}
	for i, s := range rep.Segments[:3] {
		if !s.Unchained || s.Chain != nil {
			t.Errorf("older segment %d: unchained %v, chain %+v; want unchained", i+1, s.Unchained, s.Chain)
		}
	}
	if c := rep.Segments[3].Chain; c == nil || c.Number != 4 || c.Prev != filepath.Base(segs[2]) || w.Number() != 4 {
		t.Errorf("new segment after older ones: chain %+v (writer %d), want number 4 after %s", c, w.Number(), filepath.Base(segs[2]))
	}
}

// TestChainWhileAnotherHostWrites: a segment opened while the one before it is still
// being written records so, and that segment may then grow and close without breaking the
// link.
func TestChainWhileAnotherHostWrites(t *testing.T) {
	dir := t.TempDir()
	first := writeSegment(t, dir, true)
	second := writeSegment(t, dir, false)
	s2 := &Session{ID: "s2", Label: "b"}
	if err := first.Append(Record{Kind: KindSessionStart, Session: s2}, nil); err != nil {
		t.Fatal(err)
	}
	if err := first.Append(Record{Kind: KindSessionEnd, Session: s2, End: &End{Reason: ReasonRevoked}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := first.Close("done"); err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Segments[1].Chain; c == nil || !c.PrevOpen || c.PrevRecords != 4 || c.Prev != first.ID() {
		t.Errorf("chain of %s = %+v, want PrevOpen after record 4 of %s", second.ID(), c, first.ID())
	}
	if !rep.OK() || rep.Segments[0].Records != 7 {
		t.Errorf("Verify = %+v; want OK, the first segment grown to 7 records", rep.Segments)
	}
}

// TestChainAfterCrash: a segment whose host died (no journal_end) is linked at its last
// record; records appended to it later break the link.
func TestChainAfterCrash(t *testing.T) {
	dir := t.TempDir()
	crashed := writeSegment(t, dir, true)
	crashed.Break(errors.New("killed"))
	crashed.Close("killed") // no journal_end: the file is closed as a kill would
	next := writeSegment(t, dir, false)
	rep, err := Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Segments[1].Chain; c == nil || c.PrevOpen || c.PrevRecords != 4 {
		t.Fatalf("chain of %s = %+v, want it closed after record 4", next.ID(), c)
	}
	if s := rep.Segments[0]; !s.Intact || s.Complete || !rep.Segments[1].OK() {
		t.Fatalf("segments = %+v; want the first cut off, the second OK", rep.Segments)
	}
	forge(t, crashed.Dir(), crashed.ID(), func(r []Record) []Record {
		return append(r, Record{Kind: KindJournalEnd, End: &End{Reason: "done"}})
	})
	rep, err = Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Segments[0]; s.Intact || !strings.Contains(s.Problems[0].String(), "record 5: comes after record 4, which segment "+next.ID()+" recorded as this segment's end: records appended") {
		t.Errorf("after appending: %+v, want records appended", s)
	}
}

// TestOpenConcurrently: hosts opening segments in one directory at once still form one
// line, numbered 1 to n.
func TestOpenConcurrently(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			w, err := Open(Options{Dir: dir})
			if err != nil {
				t.Errorf("Open: %v", err)
				return
			}
			w.Close("done")
		})
	}
	wg.Wait()
	rep, err := Verify(dir)
	if err != nil || !rep.OK() || len(rep.Segments) != n {
		t.Fatalf("Verify = %+v, %v; want %d segments, OK", rep, err, n)
	}
	for i, s := range rep.Segments {
		if s.Chain.Number != uint64(i+1) {
			t.Errorf("segment %d is number %d", i+1, s.Chain.Number)
		}
	}
}

// TestSegmentNamesFollowTheChain: a clock set back does not name a segment before the one
// it follows.
func TestSegmentNamesFollowTheChain(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for i, at := range []time.Time{now, now.Add(-time.Hour), now.Add(-time.Hour)} {
		w, err := Open(Options{Dir: dir, Now: func() time.Time { return at }})
		if err != nil {
			t.Fatal(err)
		}
		if w.Number() != uint64(i+1) {
			t.Errorf("segment %d is number %d", i+1, w.Number())
		}
		w.Close("done")
	}
	rep, err := Verify(dir)
	if err != nil || !rep.OK() {
		t.Fatalf("Verify = %+v, %v; want OK", rep, err)
	}
	if got, want := rep.Segments[2].ID[:len(idLayout)], "20260501T120000.000002Z"; got != want {
		t.Errorf("third segment's time %s, want %s", got, want)
	}
}

func TestVerifyHead(t *testing.T) {
	tests := []struct {
		name   string
		head   func(segs []string, heads []string) string
		attack func(segs []string)
		found  bool
		seg    int // the segment holding the head, when found
		after  int
	}{
		{name: "the journal's head", head: func(_, h []string) string { return h[2] }, found: true, seg: 2},
		{name: "in capitals", head: func(_, h []string) string { return strings.ToUpper(h[2]) }, found: true, seg: 2},
		{name: "an older segment's head", head: func(_, h []string) string { return h[1] }, found: true, seg: 1, after: 5},
		{name: "newest segment deleted", head: func(_, h []string) string { return h[2] }, attack: func(s []string) { os.RemoveAll(s[2]) }},
		{name: "two newest segments deleted", head: func(_, h []string) string { return h[2] }, attack: func(s []string) { os.RemoveAll(s[2]); os.RemoveAll(s[1]) }},
		{name: "newest segment's end cut off", head: func(_, h []string) string { return h[2] }, attack: func(s []string) {
			p := filepath.Join(s[2], SegmentFile)
			b, _ := os.ReadFile(p)
			lines := bytes.SplitAfter(b, []byte("\n"))
			os.WriteFile(p, bytes.Join(lines[:3], nil), 0o600)
		}},
		{name: "a hash no record has", head: func(_, _ []string) string { return strings.Repeat("0", 64) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var segs, heads []string
			for range 3 {
				w := writeSegment(t, dir, false)
				_, h := w.Head()
				segs, heads = append(segs, w.Dir()), append(heads, h)
			}
			if tt.attack != nil {
				tt.attack(segs)
			}
			rep, err := VerifyHead(dir, tt.head(segs, heads))
			if err != nil {
				t.Fatal(err)
			}
			a := rep.Anchor
			if a.Found != tt.found || rep.OK() != tt.found {
				t.Fatalf("VerifyHead: anchor %+v, OK %v; want found %v", a, rep.OK(), tt.found)
			}
			if tt.found && (a.Segment != filepath.Base(segs[tt.seg]) || a.Seq != 5 || !a.End || a.After != tt.after) {
				t.Errorf("anchor %+v, want record 5 of %s, its end, %d after", a, filepath.Base(segs[tt.seg]), tt.after)
			}
		})
	}
	for _, bad := range []string{"", "abc", strings.Repeat("g", 64), strings.Repeat("a", 65)} {
		if _, err := VerifyHead(t.TempDir(), bad); !errors.Is(err, ErrBadHead) {
			t.Errorf("VerifyHead(%q) = %v, want ErrBadHead", bad, err)
		}
	}
}

// TestCloseLogsHead: the writer logs the segment's head at info level when it closes it,
// the hash VerifyHead then finds as the journal's last record.
func TestCloseLogsHead(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	dir := t.TempDir()
	w, err := Open(Options{Dir: dir, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close("done"); err != nil {
		t.Fatal(err)
	}
	var closed struct {
		Level, Msg, Segment, Head string
		Number, Records           uint64
	}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if strings.Contains(line, `"journal segment closed"`) {
			if err := json.Unmarshal([]byte(line), &closed); err != nil {
				t.Fatal(err)
			}
		}
	}
	records, head := w.Head()
	if closed.Level != "INFO" || closed.Segment != w.ID() || closed.Number != 1 || closed.Records != records || closed.Head != head || records != 2 {
		t.Fatalf("close logged %+v, want INFO, segment %s, number 1, records %d, head %s\nlog:\n%s", closed, w.ID(), records, head, buf.String())
	}
	rep, err := VerifyHead(dir, closed.Head)
	if err != nil || !rep.OK() || rep.Anchor.After != 0 {
		t.Fatalf("VerifyHead(logged head) = %+v, %v; want OK, the journal's last record", rep, err)
	}
}

func TestReadHead(t *testing.T) {
	dir := t.TempDir()
	writeSegment(t, dir, false)
	w := writeSegment(t, dir, true)
	h, err := ReadHead(dir)
	records, hash := w.Head()
	if err != nil || h.Segment != w.ID() || h.Number != 2 || h.Records != records || h.Hash != hash || !h.Open {
		t.Fatalf("ReadHead while written = %+v, %v; want %s number 2, %d records, head %s, open", h, err, w.ID(), records, hash)
	}
	w.Close("done")
	records, hash = w.Head()
	if h, err = ReadHead(dir); err != nil || h.Records != records || h.Hash != hash || h.Open {
		t.Fatalf("ReadHead after Close = %+v, %v; want %d records, head %s, not open", h, err, records, hash)
	}
	rep, _ := Verify(dir)
	if last := rep.Segments[1]; last.Head != h.Hash {
		t.Errorf("ReadHead's hash %s, Verify's head %s", h.Hash, last.Head)
	}
}

// TestHeadDecode: the head read from a segment's last line is the head Verify finds, for
// every intact segment; a torn or modified tail falls back to the last good record.
func TestHeadDecode(t *testing.T) {
	for _, tt := range headCases(t) {
		t.Run(tt.name, func(t *testing.T) {
			h := Head{Segment: "seg"}
			if err := h.decode(bytes.NewReader(tt.file), int64(len(tt.file))); err != nil {
				t.Fatal(err)
			}
			if h.Records != tt.records || h.Number != tt.number || (tt.records > 0) != (h.Hash != "") {
				t.Errorf("decode = %+v, want number %d, %d records", h, tt.number, tt.records)
			}
			seg, err := readSegmentFrom(bytes.NewReader(tt.file), "seg", false)
			if err != nil {
				t.Fatal(err)
			}
			if seg.Report.Intact && (uint64(seg.Report.Records) != h.Records || seg.Report.Head != h.Hash) {
				t.Errorf("decode = %d records, head %s; Verify finds %d, %s", h.Records, h.Hash, seg.Report.Records, seg.Report.Head)
			}
		})
	}
}

type headCase struct {
	name            string
	file            []byte
	number, records uint64
}

// headCases are the file of a segment named "seg" and that file with its tail damaged in
// several ways.
func headCases(t testing.TB) []headCase {
	dir := t.TempDir()
	w, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	w.Append(Record{Kind: KindSessionStart, Session: sess}, nil)
	w.Append(Record{Kind: KindCallReadOnly, Session: sess, Call: &Call{Seq: 1, Tool: "noop", Arguments: []byte(`{"pad":"` + strings.Repeat("x", 70000) + `"}`)}}, nil)
	w.Close("done")
	b, err := os.ReadFile(filepath.Join(forge(t, w.Dir(), "seg", nil), SegmentFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	modified := bytes.Clone(b)
	modified[len(modified)-10] ^= 1
	return []headCase{
		{name: "closed", file: b, number: 1, records: 4},
		{name: "torn last line", file: append(bytes.Clone(b), `{"hash":"0`...), number: 1, records: 4},
		{name: "last line modified", file: modified, number: 1, records: 3},
		{name: "a long line last", file: bytes.Join(lines[:3], nil), number: 1, records: 3},
		{name: "start only", file: lines[0], number: 1, records: 1},
		{name: "empty", file: nil},
		{name: "no newline", file: []byte(`{"hash":"`)},
		{name: "garbage", file: []byte("\n\nnot json\n")},
	}
}

// FuzzHeadDecode: no segment file makes the head decoder panic, and for one Verify finds
// intact it reads the head Verify finds.
func FuzzHeadDecode(f *testing.F) {
	for _, c := range headCases(f) {
		f.Add(c.file)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h := Head{Segment: "seg"}
		if err := h.decode(bytes.NewReader(b), int64(len(b))); err != nil {
			t.Fatalf("decode: %v", err)
		}
		seg, err := readSegmentFrom(bytes.NewReader(b), "seg", false)
		if err != nil {
			t.Fatal(err)
		}
		if seg.Report.Intact && (uint64(seg.Report.Records) != h.Records || seg.Report.Head != h.Hash) {
			t.Fatalf("decode = %d records, head %s; Verify finds %d, %s", h.Records, h.Hash, seg.Report.Records, seg.Report.Head)
		}
	})
}

// FuzzParseHead: a head is accepted only as 64 hexadecimal digits, returned in lowercase.
func FuzzParseHead(f *testing.F) {
	for _, s := range []string{strings.Repeat("a", 64), strings.Repeat("F", 64), "", "abc", strings.Repeat("g", 64)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := parseHead(s)
		if err != nil {
			return
		}
		if len(h) != 64 || !isLowerHex(h) || h != strings.ToLower(s) {
			t.Fatalf("parseHead(%q) = %q", s, h)
		}
	})
}

func ExampleVerifyHead() {
	dir, _ := os.MkdirTemp("", "journal-example-")
	defer os.RemoveAll(dir)
	var heads []string
	for range 2 {
		w, _ := Open(Options{Dir: dir})
		w.Close("done")
		_, head := w.Head() // what the host logs when it closes its segment
		heads = append(heads, head)
	}
	segs, _ := Segments(dir)
	os.RemoveAll(segs[1]) // the newest segment deleted

	rep, _ := Verify(dir)
	fmt.Println("without the head:", rep.OK())
	rep, _ = VerifyHead(dir, heads[1])
	fmt.Println("with the head:", rep.OK())
	// Output:
	// without the head: true
	// with the head: false
}
