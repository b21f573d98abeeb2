package report

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestKeepRecording narrows a report to one recording's calls and says why it stopped.
func TestKeepRecording(t *testing.T) {
	mark := func(name string, turn int, stop string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"route": "xtest", "recording": map[string]any{"name": name, "turn": turn, "stop_reason": stop}})
		return b
	}
	call := func(sid string, seq uint64, tool string, result json.RawMessage) Call {
		return Call{Segment: "seg", Session: "mcp-" + sid, SessionID: sid, Seq: seq, Tool: tool, Outcome: "completed", Result: result, Received: "t" + string(rune('a'+seq))}
	}
	base := func() *Report {
		return &Report{
			Sessions: []Session{{Segment: "seg"}, {Segment: "seg"}},
			Calls: []Call{
				call("A", 1, "start_recording", nil),
				call("A", 2, "click", mark("r1", 1, "")),
				call("A", 3, "list_windows", mark("r1", 0, "")),
				call("A", 4, "press_key", mark("r1", 2, "max_turns")),
				call("A", 5, "click", json.RawMessage(`{"route":"xtest"}`)),
				call("B", 1, "start_recording", nil),
				call("B", 2, "click", mark("r1", 1, "")),
				call("B", 3, "stop_recording", nil),
				call("B", 4, "click", mark("other", 1, "")),
			},
		}
	}
	r := base()
	r.Sessions[0].ID, r.Sessions[1].ID = "A", "B"
	if !r.KeepRecording("r1") {
		t.Fatal("KeepRecording(r1) = false, want true")
	}
	var got []string
	for _, c := range r.Calls {
		got = append(got, c.SessionID+"/"+c.Tool)
	}
	if want := []string{"A/click", "A/list_windows", "A/press_key", "B/click"}; !reflect.DeepEqual(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
	want := []Recording{
		{Name: "r1", Segment: "seg", Session: "mcp-A", SessionID: "A", Calls: 3, Turns: 2, StopReason: "max_turns", FirstCall: "tc", LastCall: "te"},
		{Name: "r1", Segment: "seg", Session: "mcp-B", SessionID: "B", Calls: 1, Turns: 1, StopReason: "stopped", FirstCall: "tc", LastCall: "tc"},
	}
	if !reflect.DeepEqual(r.Recordings, want) {
		t.Errorf("Recordings = %+v, want %+v", r.Recordings, want)
	}
	if r.Summary.Calls != 4 || len(r.Sessions) != 2 || r.Recording != "r1" {
		t.Errorf("summary %d calls, %d sessions, recording %q; want 4, 2, r1", r.Summary.Calls, len(r.Sessions), r.Recording)
	}

	r = base()
	if r.KeepRecording("none") || len(r.Calls) != 0 || r.Summary.Calls != 0 {
		t.Errorf("KeepRecording(none) kept %d calls, want none", len(r.Calls))
	}
}
