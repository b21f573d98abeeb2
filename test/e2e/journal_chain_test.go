package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/host/journal"
)

// closedLine matches the line a host logs when it closes its journal segment.
var closedLine = regexp.MustCompile(`msg="journal segment closed" .*segment=(\S+) number=(\d+) records=(\d+) head=([0-9a-f]{64})`)

// TestJournalChain: three hosts in turn keep one journal, one segment each, and each logs
// its segment's head as it closes it. Deleting the middle segment makes `journal verify`
// fail and name it. Deleting the newest one is invisible in the files alone; `journal
// verify --head` with the head the last host logged detects it.
func TestJournalChain(t *testing.T) {
	needDesktop(t)
	dir := filepath.Join(t.TempDir(), "journal")
	var segs, heads []string
	for i := range 3 {
		rp := startRun(t, append(append([]string(nil), unrestricted...), "--journal", dir, "--journal-screenshots=false")...)
		rp.mustCall(t, "get_desktop_state", map[string]any{})
		if err := rp.close(); err != nil {
			t.Fatalf("cua-host run %d exit: %v", i+1, err)
		}
		m := closedLine.FindStringSubmatch(rp.log())
		if m == nil {
			t.Fatalf("host %d logged no head when it closed its segment; log:\n%s", i+1, rp.log())
		}
		if want := string(rune('1' + i)); m[2] != want {
			t.Errorf("host %d closed segment number %s, want %s", i+1, m[2], want)
		}
		segs, heads = append(segs, m[1]), append(heads, m[4])
	}
	paths, err := journal.Segments(dir)
	if err != nil || len(paths) != 3 {
		t.Fatalf("Segments = %v, %v; want three", paths, err)
	}
	for i, p := range paths {
		if filepath.Base(p) != segs[i] {
			t.Fatalf("segment %d is %s, the host logged %s", i+1, filepath.Base(p), segs[i])
		}
	}
	if out, code := cua(t, "journal", "verify", "--head", heads[2], dir); code != 0 || !strings.Contains(out, "head "+heads[2]+": found: the journal's last record") {
		t.Fatalf("journal verify --head (intact) = %d, want 0, the head found:\n%s", code, out)
	}
	if out, code := cua(t, "journal", "head", dir); code != 0 || !strings.Contains(out, "segment "+segs[2]+" (number 3): ") || !strings.Contains(out, "head "+heads[2]) {
		t.Errorf("journal head = %d %q, want segment %s number 3, head %s", code, out, segs[2], heads[2])
	}
	newest := filepath.Join(t.TempDir(), "newest-deleted")
	copyJournal(t, dir, newest)

	// A middle segment deleted: the segment after it names it.
	if err := os.RemoveAll(paths[1]); err != nil {
		t.Fatal(err)
	}
	out, code := cua(t, "journal", "verify", dir)
	if code != 1 || !strings.Contains(out, "segment "+segs[2]+": TAMPERED: record 1: the segment before this one, "+segs[1]+" (number 2), is missing") {
		t.Errorf("journal verify after deleting %s = %d, want 1 naming it:\n%s", segs[1], code, out)
	}
	t.Logf("journal verify, the middle segment deleted:\n%s", out)

	// The newest segment deleted: only the head kept elsewhere shows it.
	if err := os.RemoveAll(filepath.Join(newest, segs[2])); err != nil {
		t.Fatal(err)
	}
	if out, code := cua(t, "journal", "verify", newest); code != 0 {
		t.Errorf("journal verify after deleting the newest segment, no head = %d, want 0 (the files alone cannot show it):\n%s", code, out)
	}
	out, code = cua(t, "journal", "verify", newest, "--head", heads[2])
	if code != 1 || !strings.Contains(out, "head "+heads[2]+": NOT FOUND") || !strings.Contains(out, "the journal ends at segment "+segs[1]) {
		t.Errorf("journal verify --head after deleting the newest segment = %d, want 1, the head not found:\n%s", code, out)
	}
	t.Logf("journal verify --head, the newest segment deleted:\n%s", out)
	if out, code := cua(t, "journal", "verify", newest, "--head", heads[1]); code != 0 {
		t.Errorf("journal verify --head with the second host's head = %d, want 0:\n%s", code, out)
	}
}
