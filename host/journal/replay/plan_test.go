package replay

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/host/journal"
)

// writeJournal writes one segment: a session, a launch, a type_text (text kept or
// redacted) and a click that failed.
func writeJournal(t *testing.T, keepText bool) string {
	t.Helper()
	dir := t.TempDir()
	w, err := journal.Open(journal.Options{Dir: dir, KeepText: keepText})
	if err != nil {
		t.Fatal(err)
	}
	s := &journal.Session{ID: "s1", Label: "mcp", Mode: "unrestricted"}
	text := `{"pid":10,"window_id":20,"text":"echo hi"}`
	if !keepText {
		text = `{"pid":10,"window_id":20,"text":"[redacted: 7 characters]"}`
	}
	recs := []journal.Record{
		{Kind: journal.KindSessionStart, Session: s},
		{Kind: journal.KindCallBegin, Session: s, Call: &journal.Call{Seq: 1, Tool: "launch_app", Arguments: []byte(`{"name":"xterm"}`)}},
		{Kind: journal.KindCallEnd, Session: s, Call: &journal.Call{Seq: 1, Tool: "launch_app", Outcome: "completed", Result: []byte(`{"pid":10,"window_ids":[20],"windows":[{"window_id":20,"title":"t"}]}`)}},
		{Kind: journal.KindCallBegin, Session: s, Call: &journal.Call{Seq: 2, Tool: "type_text", Arguments: []byte(text)}},
		{Kind: journal.KindCallEnd, Session: s, Call: &journal.Call{Seq: 2, Tool: "type_text", Outcome: "completed"}},
		{Kind: journal.KindCallBegin, Session: s, Call: &journal.Call{Seq: 3, Tool: "click", Arguments: []byte(`{"pid":10,"x":1,"y":2}`)}},
		{Kind: journal.KindCallEnd, Session: s, Call: &journal.Call{Seq: 3, Tool: "click", Outcome: "completed", IsError: true}},
		{Kind: journal.KindSessionEnd, Session: s, End: &journal.End{Reason: journal.ReasonHostClosed}},
	}
	for _, r := range recs {
		if err := w.Append(r, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close("test"); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLoadPlan(t *testing.T) {
	p, err := Load(writeJournal(t, true))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sessions) != 1 || p.Sessions[0].Mode != "unrestricted" || len(p.Steps) != 3 {
		t.Fatalf("plan = %+v", p)
	}
	if l := p.Steps[0].Launched; l == nil || l.PID != 10 || len(l.WindowIDs) != 1 || l.Windows[0].Title != "t" {
		t.Errorf("launch facts = %+v", p.Steps[0].Launched)
	}
	if p.Steps[1].Skip != "" || p.Steps[2].Skip != "the original call failed" {
		t.Errorf("skips = %q, %q", p.Steps[1].Skip, p.Steps[2].Skip)
	}
}

func TestLoadRefusesRedacted(t *testing.T) {
	_, err := Load(writeJournal(t, false))
	var re *Error
	if !errors.As(err, &re) || re.Step == nil || re.Step.N != 2 || !strings.Contains(err.Error(), "step 2 (record 5") || !strings.Contains(err.Error(), "type_text") || !strings.Contains(err.Error(), "redacted") {
		t.Fatalf("Load = %v, want a refusal naming step 2 (record 5, type_text) as redacted", err)
	}
}

func TestLoadRefusesTampered(t *testing.T) {
	dir := writeJournal(t, true)
	segs, err := journal.Segments(dir)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(segs[0], journal.SegmentFile)
	b, _ := os.ReadFile(file)
	b = []byte(strings.Replace(string(b), "echo hi", "echo ho", 1))
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "does not verify") || !strings.Contains(err.Error(), "record 5") {
		t.Fatalf("Load of a tampered journal = %v, want a refusal naming record 5", err)
	}
}
