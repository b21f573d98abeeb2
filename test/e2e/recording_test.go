package e2e

import (
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRecordingSpansTheJournal: a recording of two turns, driven through MCP, stops by
// itself after its second action; the terminal it typed into wrote what every action
// typed (inside the recording and after it); the journal verifies, and `journal show
// --recording`, run as a process of its own, lists exactly the two actions of the span
// with screenshot files before and after. The refusals of the recording tools are the
// documented ones, with a journal and without.
func TestRecordingSpansTheJournal(t *testing.T) {
	needDesktop(t)
	dir := filepath.Join(t.TempDir(), "journal")
	rp := startRun(t, append(append([]string(nil), unrestricted...), "--journal", dir)...)

	// Nothing runs yet: stop is refused, and the state says so.
	if res := rp.call(t, "stop_recording", map[string]any{}); !res.IsError || refusalCode(t, res) != "recording_inactive" {
		t.Fatalf("stop_recording before any start = %v %q, want recording_inactive", structured(t, res), text(res))
	}
	if res := rp.call(t, "start_recording", map[string]any{"output_dir": "/tmp/x"}); !res.IsError || refusalCode(t, res) != "invalid_arguments" || !strings.Contains(text(res), "--journal DIR") {
		t.Fatalf("start_recording with output_dir = %v %q, want invalid_arguments naming --journal DIR", structured(t, res), text(res))
	}

	out := filepath.Join(t.TempDir(), "typed.txt")
	_, launched := rp.mustCall(t, "launch_app", map[string]any{"name": "xterm",
		"additional_arguments": []string{"-title", "cua-recording", "-e", "sh", "-c", "stty -echo; exec cat > " + out}})
	ids, _ := launched["window_ids"].([]any)
	if len(ids) == 0 {
		t.Fatalf("launch_app xterm = %v", launched)
	}
	target := map[string]any{"pid": number(launched, "pid"), "window_id": int(ids[0].(float64))}
	if !waitFor(15*time.Second, func() bool { _, err := os.Stat(out); return err == nil }) {
		t.Fatalf("the terminal's cat never started (no %s)", out)
	}

	_, st := rp.mustCall(t, "start_recording", map[string]any{"name": "rec-e2e", "max_turns": 2})
	if st["enabled"] != true || st["name"] != "rec-e2e" || number(st, "max_turns") != 2 || number(st, "turns_left") != 2 {
		t.Fatalf("start_recording = %v, want rec-e2e running with 2 turns left", st)
	}
	if res := rp.call(t, "start_recording", map[string]any{"name": "again"}); !res.IsError || refusalCode(t, res) != "recording_active" {
		t.Fatalf("start_recording while one runs = %v %q, want recording_active", structured(t, res), text(res))
	}
	rp.mustCall(t, "list_windows", map[string]any{}) // inside the span, not a turn
	rp.mustCall(t, "type_text", merge(target, map[string]any{"text": "one"}))
	_, st = rp.mustCall(t, "get_recording_state", map[string]any{})
	if st["enabled"] != true || number(st, "turns") != 1 || number(st, "next_turn") != 2 {
		t.Fatalf("get_recording_state after one action = %v, want 1 turn", st)
	}
	rp.mustCall(t, "press_key", merge(target, map[string]any{"key": "Return"}))
	// The recording stopped with its second turn; these run outside it.
	rp.mustCall(t, "type_text", merge(target, map[string]any{"text": "two"}))
	rp.mustCall(t, "press_key", merge(target, map[string]any{"key": "Return"}))
	if !waitFor(10*time.Second, func() bool { b, _ := os.ReadFile(out); return string(b) == "one\ntwo\n" }) {
		b, _ := os.ReadFile(out)
		t.Fatalf("the terminal wrote %q, want %q: every action ran", b, "one\ntwo\n")
	}
	_, st = rp.mustCall(t, "get_recording_state", map[string]any{})
	journalFacts, _ := st["journal"].(map[string]any)
	if st["enabled"] != false || st["stop_reason"] != "max_turns" || number(st, "turns") != 2 || number(st, "turns_left") != 0 ||
		st["name"] != "rec-e2e" || journalFacts["kept"] != true || journalFacts["screenshots"] != true || journalFacts["text"] != false {
		t.Fatalf("get_recording_state after the budget = %v, want rec-e2e stopped by max_turns after 2 turns", st)
	}
	if res := rp.call(t, "stop_recording", map[string]any{}); !res.IsError || refusalCode(t, res) != "recording_inactive" || !strings.Contains(text(res), "max_turns") {
		t.Fatalf("stop_recording after the budget = %v %q, want recording_inactive naming max_turns", structured(t, res), text(res))
	}
	// A second recording, stopped by hand, holds no action.
	rp.mustCall(t, "start_recording", map[string]any{"name": "empty"})
	if _, st = rp.mustCall(t, "stop_recording", map[string]any{}); st["stop_reason"] != "stopped" || number(st, "turns") != 0 {
		t.Fatalf("stop_recording = %v, want stopped after 0 turns", st)
	}
	if err := rp.close(); err != nil {
		t.Fatalf("cua-host run exit: %v", err)
	}

	if o, code := cua(t, "journal", "verify", dir); code != 0 {
		t.Fatalf("journal verify = %d, want 0:\n%s", code, o)
	}
	cmd := exec.Command(cuaHost, "journal", "show", dir, "--recording", "rec-e2e", "--json")
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("journal show --recording rec-e2e --json: %v", err)
	}
	var rep struct {
		Recording  string `json:"recording"`
		Recordings []struct {
			Turns      int    `json:"turns"`
			Calls      int    `json:"calls"`
			StopReason string `json:"stop_reason"`
		} `json:"recordings"`
		Calls []struct {
			Tool    string `json:"tool"`
			Outcome string `json:"outcome"`
			Result  struct {
				Recording struct {
					Name string `json:"name"`
					Turn int    `json:"turn"`
				} `json:"recording"`
			} `json:"result"`
			Before *shotPath `json:"before"`
			After  *shotPath `json:"after"`
		} `json:"calls"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("journal show --json: %v\n%s", err, raw)
	}
	// The span: list_windows (read-only, no turn), then the two actions.
	var actions []string
	for _, c := range rep.Calls {
		if c.Result.Recording.Name != "rec-e2e" {
			t.Errorf("call %s marked %q, want rec-e2e", c.Tool, c.Result.Recording.Name)
		}
		if c.Tool == "list_windows" {
			if c.Result.Recording.Turn != 0 {
				t.Errorf("list_windows is turn %d, want no turn", c.Result.Recording.Turn)
			}
			continue
		}
		actions = append(actions, c.Tool)
		if c.Result.Recording.Turn != len(actions) || c.Outcome != "completed" {
			t.Errorf("%s: turn %d, outcome %s; want turn %d, completed", c.Tool, c.Result.Recording.Turn, c.Outcome, len(actions))
		}
		for what, s := range map[string]*shotPath{"before": c.Before, "after": c.After} {
			if s == nil || s.Path == "" {
				t.Errorf("%s: no %s screenshot", c.Tool, what)
				continue
			}
			f, err := os.Open(s.Path)
			if err != nil {
				t.Errorf("%s: %s screenshot: %v", c.Tool, what, err)
				continue
			}
			cfg, err := png.DecodeConfig(f)
			f.Close()
			if err != nil || cfg.Width == 0 || cfg.Height == 0 {
				t.Errorf("%s: %s screenshot %s is no PNG image: %v", c.Tool, what, s.Path, err)
			}
		}
	}
	if got := strings.Join(actions, " "); got != "type_text press_key" || len(rep.Calls) != 3 {
		t.Errorf("recording rec-e2e lists %d calls, actions %q; want list_windows and the actions type_text press_key", len(rep.Calls), got)
	}
	if rep.Recording != "rec-e2e" || len(rep.Recordings) != 1 || rep.Recordings[0].Turns != 2 || rep.Recordings[0].StopReason != "max_turns" {
		t.Errorf("recordings = %+v, want one of 2 turns stopped by max_turns", rep.Recordings)
	}
	if o, code := cua(t, "journal", "show", dir, "--recording", "empty", "--json"); code != 1 || !strings.Contains(o, `"empty"`) {
		t.Errorf("journal show --recording empty = %d %q, want 1: no call belongs to it", code, o)
	}

	// Without a journal there is nothing to mark: refused unsupported, naming the flag.
	bare := startRun(t, unrestricted...)
	res := bare.call(t, "start_recording", map[string]any{})
	if !res.IsError || refusalCode(t, res) != "unsupported" || !strings.Contains(text(res), "--journal DIR") {
		t.Fatalf("start_recording without a journal = %v %q, want unsupported naming --journal DIR", structured(t, res), text(res))
	}
	if _, st = bare.mustCall(t, "get_recording_state", map[string]any{}); st["available"] != false || st["enabled"] != false {
		t.Fatalf("get_recording_state without a journal = %v, want available false", st)
	}
}

// shotPath is where `journal show --json` says a screenshot's file is.
type shotPath struct {
	Path string `json:"path"`
}
