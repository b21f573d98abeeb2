package report

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/host/journal"
)

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 3))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestBuildAndRender(t *testing.T) {
	dir := t.TempDir()
	w, err := journal.Open(journal.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s := &journal.Session{ID: "id1", Label: "agent-<1>", Mode: "standard"}
	must := func(r journal.Record, shot []byte) {
		t.Helper()
		if err := w.Append(r, shot); err != nil {
			t.Fatal(err)
		}
	}
	must(journal.Record{Kind: journal.KindSessionStart, Session: s}, nil)
	must(journal.Record{Kind: journal.KindCallBegin, Session: s, Call: &journal.Call{Seq: 1, Tool: "click", Arguments: json.RawMessage(`{"x":2,"y":1}`),
		Target: &journal.Rect{X: 2, Y: 1}, Screenshot: &journal.Shot{Width: 4, Height: 3, Scale: 1}}}, pngBytes(t))
	must(journal.Record{Kind: journal.KindCallEnd, Session: s, Call: &journal.Call{Seq: 1, Tool: "click", Outcome: "completed", RunUS: 1500}}, nil)
	must(journal.Record{Kind: journal.KindCallRefused, Session: s, Call: &journal.Call{Seq: 2, Tool: "type_text", Outcome: "not_started",
		Refusal: &journal.Refusal{Code: "permission_denied", Message: "<script>alert(1)</script>"}}}, nil)
	must(journal.Record{Kind: journal.KindCallBegin, Session: s, Call: &journal.Call{Seq: 3, Tool: "press_key"}}, nil)
	w.Close("done")

	r, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Calls) != 3 || r.Summary.Refusals["permission_denied"] != 1 || r.Calls[2].Outcome != "unknown" || r.OK {
		t.Fatalf("Build = %+v, want 3 calls, one refusal, the last unknown, not OK", r)
	}
	var html bytes.Buffer
	if err := WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	page := html.String()
	for _, want := range []string{"data:image/png;base64,", `data-tool="click"`, `data-outcome="not_started"`, "permission_denied", "<circle", "agent-&lt;1&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>alert") {
		t.Error("HTML contains a record's text unescaped")
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Calls) != 3 {
		t.Errorf("JSON round trip: %v, %d calls", err, len(back.Calls))
	}
	if _, err := Build(filepath.Join(dir, "nope")); err == nil {
		t.Error("Build of a missing directory succeeded")
	}
}
