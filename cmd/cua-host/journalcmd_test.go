package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/host/journal"
)

// journalOfSegments writes a journal of n segments, each closed in order, and returns its
// directory, the segments' names and the heads their writers closed with.
func journalOfSegments(t *testing.T, n int) (dir string, names, heads []string) {
	t.Helper()
	dir = t.TempDir()
	for range n {
		w, err := journal.Open(journal.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close("done"); err != nil {
			t.Fatal(err)
		}
		_, head := w.Head()
		names, heads = append(names, w.ID()), append(heads, head)
	}
	return dir, names, heads
}

func TestJournalVerifyChain(t *testing.T) {
	tests := []struct {
		name string
		// args builds the arguments after `journal`; attack changes the journal first.
		args   func(dir string, heads []string) []string
		attack func(dir string, names []string)
		exit   int
		// want and notWant are checked against the output with {segN} and {headN}
		// replaced by the names and heads of segment N (from 1).
		want    []string
		notWant []string
	}{
		{name: "intact", args: verifyArgs(), exit: 0,
			want: []string{"segment {seg3}: OK: 2 records, chain intact, ended in order, head {head3}"}, notWant: []string{"unchained"}},
		{name: "middle segment deleted", args: verifyArgs(), exit: 1,
			attack: remove(1),
			want:   []string{"segment {seg3}: TAMPERED: record 1: the segment before this one, {seg2} (number 2), is missing: deleted or moved"}},
		{name: "first segment deleted", args: verifyArgs(), exit: 1,
			attack: remove(0),
			want:   []string{"segment {seg2}: TAMPERED: record 1: the segment before this one, {seg1} (number 1, the journal's first), is missing"}},
		{name: "newest segment deleted, no head given", args: verifyArgs(), exit: 0,
			attack: remove(2)},
		{name: "newest segment deleted, its head given", args: verifyArgs("--head", "{head3}"), exit: 1,
			attack: remove(2),
			want:   []string{"head {head3}: NOT FOUND: no record has it", "the journal ends at segment {seg2}, record 2, head {head2}"}},
		{name: "the journal's head given", args: verifyArgs("--head", "{head3}"), exit: 0,
			want: []string{"head {head3}: found: the journal's last record (segment {seg3}, record 2)"}},
		{name: "an older head given", args: verifyArgs("--head", "{head1}"), exit: 0,
			want: []string{"head {head1}: found at record 2 of segment {seg1} (its segment's last); 4 record(s) follow it"}},
		{name: "head flag after the directory", args: func(dir string, heads []string) []string {
			return []string{"verify", dir, "--head", heads[2]}
		}, exit: 0, want: []string{"found: the journal's last record"}},
		{name: "a head that is not a hash", args: verifyArgs("--head", "abc"), exit: 2,
			want: []string{"a head is a SHA-256: 64 hexadecimal digits"}},
		{name: "written by an older version", args: verifyArgs(), exit: 0,
			attack: func(dir string, names []string) {
				for _, n := range names {
					unchainSegment(t, filepath.Join(dir, n))
				}
			},
			want: []string{"segment {seg2}: OK: 2 records, chain intact, ended in order, head", "; unchained (written by an older version): a deleted segment cannot be detected"}},
		{name: "one segment verified alone", args: func(dir string, _ []string) []string {
			segs, _ := journal.Segments(dir)
			return []string{"verify", segs[2]}
		}, exit: 0, want: []string{"segment number 3 checked alone"}},
		{name: "head", args: func(dir string, _ []string) []string { return []string{"head", dir} }, exit: 0,
			want: []string{"segment {seg3} (number 3): 2 records, head {head3}\n"}, notWant: []string{"still writing"}},
		{name: "head of no journal", args: func(string, []string) []string { return []string{"head", t.TempDir()} }, exit: 2,
			want: []string{"holds no segment"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, names, heads := journalOfSegments(t, 3)
			if tt.attack != nil {
				tt.attack(dir, names)
			}
			var out, errOut bytes.Buffer
			code := runJournal(tt.args(dir, heads), &out, &errOut)
			got := out.String() + errOut.String()
			expand := func(s string) string {
				for i := range names {
					n := string(rune('1' + i))
					s = strings.ReplaceAll(s, "{seg"+n+"}", names[i])
					s = strings.ReplaceAll(s, "{head"+n+"}", heads[i])
				}
				return s
			}
			if code != tt.exit {
				t.Errorf("runJournal = %d, want %d:\n%s", code, tt.exit, got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, expand(w)) {
					t.Errorf("output lacks %q:\n%s", expand(w), got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, expand(w)) {
					t.Errorf("output has %q:\n%s", expand(w), got)
				}
			}
		})
	}
}

// verifyArgs returns the arguments of `journal verify [extra…] DIR`; "{head3}" in extra
// stands for the third segment's head.
func verifyArgs(extra ...string) func(dir string, heads []string) []string {
	return func(dir string, heads []string) []string {
		args := []string{"verify"}
		for _, e := range extra {
			for i, h := range heads {
				e = strings.ReplaceAll(e, "{head"+string(rune('1'+i))+"}", h)
			}
			args = append(args, e)
		}
		return append(args, dir)
	}
}

func remove(i int) func(dir string, names []string) {
	return func(dir string, names []string) { os.RemoveAll(filepath.Join(dir, names[i])) }
}

// unchainSegment rewrites a segment as an older version wrote it: format 2, no link.
func unchainSegment(t *testing.T, segDir string) {
	t.Helper()
	p := filepath.Join(segDir, journal.SegmentFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	prev := ""
	for _, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		l, err := journal.DecodeLine(line)
		if err != nil {
			t.Fatal(err)
		}
		r := l.Record
		if r.Start != nil {
			r.Start.Format, r.Start.Chain = 2, nil
		}
		r.Prev = prev
		enc, hash, err := journal.EncodeLine(&r)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(enc)
		prev = hash
	}
	if err := os.WriteFile(p, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestJournalVerifyJSON: --json carries each segment's link and what was found of the head.
func TestJournalVerifyJSON(t *testing.T) {
	dir, names, heads := journalOfSegments(t, 2)
	var out, errOut bytes.Buffer
	if code := runJournal([]string{"verify", "--json", "--head", heads[1], dir}, &out, &errOut); code != 0 {
		t.Fatalf("verify --json = %d: %s%s", code, out.String(), errOut.String())
	}
	var rep journal.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if c := rep.Segments[1].Chain; c == nil || c.Number != 2 || c.Prev != names[0] || c.PrevHead != heads[0] {
		t.Errorf("segment 2's chain = %+v, want number 2 after %s, head %s", c, names[0], heads[0])
	}
	if a := rep.Anchor; a == nil || !a.Found || a.Segment != names[1] || a.After != 0 {
		t.Errorf("anchor = %+v, want found at the end of %s", a, names[1])
	}
}
