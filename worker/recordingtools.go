package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
)

// The reference driver's recording tools, mapped onto the host's journal (recording.go):
// they mark spans of the calling session's calls; they never turn the journal on or off,
// choose where anything is written, or change what it keeps.

// Input schemas of the recording tools.
const (
	startRecordingSchema = `{"type":"object","properties":{` +
		`"name":{"type":"string","pattern":"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$","description":"The recording's name, which marks its calls in the journal (cua-host journal show DIR --recording NAME). Omitted: recording-N, N counting this session's recordings."},` +
		`"max_turns":{"type":"integer","minimum":1,"maximum":100000,"description":"Stop by itself once this many actions ran inside the recording. Omitted: no limit."},` +
		`"max_duration_ms":{"type":"integer","minimum":1,"maximum":86400000,"description":"Stop by itself this many milliseconds after it started. Omitted: no limit (the session's lifetime bounds it)."}},` +
		`"additionalProperties":false}`
	emptySchema = `{"type":"object","properties":{},"additionalProperties":false}`
)

func (w *worker) registerRecordingTools(reg *tool.Registry) {
	for _, t := range []tool.Tool{
		{Name: "start_recording", Description: "Start a recording: mark the calls of this session that follow, until stop_recording, a budget (max_turns actions, max_duration_ms) running out, or the session's end. " +
			"Turns are not written to a directory of the agent's choosing: every call already goes to the journal the host keeps (started with --journal DIR by whoever runs cua-host), with its arguments, result and, for actions, screenshots before and after when the host keeps them; the recording names its span there, and numbers its actions as turns. " +
			"output_dir and record_video are refused (invalid_arguments); without a host journal the call is refused unsupported; while a recording runs, recording_active.",
			InputSchema: []byte(startRecordingSchema), Args: tool.NewArgs[startRecordingArgs], Handler: w.startRecording},
		{Name: "stop_recording", Description: "Stop the running recording and report it: turns recorded, duration, why it stopped. Refused recording_inactive when none runs (a recording a budget stopped is no longer running; get_recording_state says why it stopped).",
			InputSchema: []byte(emptySchema), Args: tool.NewArgs[noArgs], Handler: w.stopRecording},
		{Name: "get_recording_state", Description: "The calling session's recording: whether one runs, its name, turns so far and the next turn's number, its budgets and what is left of them, when it started, why the last one stopped (stopped, max_turns, max_duration, session_ended), and whether the host keeps a journal, screenshots and text.",
			InputSchema: []byte(emptySchema), Args: tool.NewArgs[noArgs], Handler: w.recordingState, Quick: true},
	} {
		t.Annotations, t.OutputSchema = tool.InventoryAnnotations(t.Name), tool.OutputSchema(t.Name)
		reg.Register(t)
	}
}

// isTurn reports whether a call of t is a turn of a recording: an action on a protected
// resource (the inventory's active tools that are not read-only), not a call that changes
// only the session's own state.
func (w *worker) isTurn(t *tool.Tool) bool {
	if t.Annotations.ReadOnly {
		return false
	}
	e, ok := w.authorizer.inventory.Lookup(t.Name)
	return ok && e.State == authz.StateActive
}

// startRecordingArgs are start_recording's arguments. output_dir and record_video, which
// the reference takes and cua-host refuses, are read only to refuse them by name.
type startRecordingArgs struct {
	Name          *string         `json:"name"`
	MaxTurns      *int64          `json:"max_turns"`
	MaxDurationMS *int64          `json:"max_duration_ms"`
	OutputDir     json.RawMessage `json:"output_dir"`
	RecordVideo   json.RawMessage `json:"record_video"`
}

// noArgs are the arguments of a tool that takes none.
type noArgs struct{}

func (w *worker) startRecording(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	a, err := tool.ArgsOf[startRecordingArgs](call)
	if err != nil {
		return nil, err
	}
	if a.OutputDir != nil {
		return nil, authz.Refuse(authz.CodeInvalidArguments, "output_dir: cua-host writes no recording where the agent names; every call goes to the journal the host keeps (--journal DIR), and `cua-host journal show DIR --recording NAME` shows a recording's calls with their screenshots")
	}
	if a.RecordVideo != nil {
		return nil, authz.Refuse(authz.CodeInvalidArguments, "record_video: cua-host records no video; the host's journal keeps a screenshot before and after each action when the host keeps screenshots")
	}
	name := ""
	if a.Name != nil {
		if !recordingNamePattern.MatchString(*a.Name) {
			return nil, authz.Refuse(authz.CodeInvalidArguments, "name %q: want 1–64 letters, digits, '.', '_' or '-', starting with a letter or digit", *a.Name)
		}
		name = *a.Name
	}
	var turns int
	if a.MaxTurns != nil {
		if *a.MaxTurns < 1 || *a.MaxTurns > maxRecordingTurns {
			return nil, authz.Refuse(authz.CodeInvalidArguments, "max_turns %d: want 1–%d", *a.MaxTurns, maxRecordingTurns)
		}
		turns = int(*a.MaxTurns)
	}
	var dur time.Duration
	if a.MaxDurationMS != nil {
		if *a.MaxDurationMS < 1 || *a.MaxDurationMS > maxRecordingDurationMS {
			return nil, authz.Refuse(authz.CodeInvalidArguments, "max_duration_ms %d: want 1–%d", *a.MaxDurationMS, maxRecordingDurationMS)
		}
		dur = time.Duration(*a.MaxDurationMS) * time.Millisecond
	}
	if w.journal == nil {
		return nil, authz.Refuse(authz.CodeUnsupported, "the host keeps no journal, and a recording is a span of it: whoever runs cua-host turns it on with --journal DIR")
	}
	s, err := w.callerSession(call)
	if err != nil {
		return nil, err
	}
	sp, r := s.recording.start(name, turns, dur, w.cfg.Now())
	if r != nil {
		return nil, r
	}
	out := w.recordingResult(s, sp, true, true)
	return tool.TextResult(fmt.Sprintf("Recording %q started: the calls that follow are marked in the host's journal (cua-host journal show DIR --recording %s).", sp.name, sp.name), out), nil
}

func (w *worker) stopRecording(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	if _, err := tool.ArgsOf[noArgs](call); err != nil {
		return nil, err
	}
	s, err := w.callerSession(call)
	if err != nil {
		return nil, err
	}
	sp, r := s.recording.stop(w.cfg.Now())
	if r != nil {
		return nil, r
	}
	out := w.recordingResult(s, sp, false, true)
	return tool.TextResult(fmt.Sprintf("Recording %q stopped after %d turns and %v.", sp.name, sp.turns, sp.stopped.Sub(sp.started).Round(time.Millisecond)), out), nil
}

func (w *worker) recordingState(ctx context.Context, call *tool.Call) (*tool.Result, error) {
	if _, err := tool.ArgsOf[noArgs](call); err != nil {
		return nil, err
	}
	s, err := w.callerSession(call)
	if err != nil {
		return nil, err
	}
	sp, running, ok := s.recording.snapshot(w.cfg.Now())
	out := w.recordingResult(s, sp, running, ok)
	text := "recording: disabled"
	switch {
	case running:
		text = fmt.Sprintf("recording: enabled name=%s turns=%d next_turn=%d", sp.name, sp.turns, sp.turns+1)
	case ok:
		text = fmt.Sprintf("recording: disabled; %q stopped (%s) after %d turns", sp.name, sp.reason, sp.turns)
	}
	if w.journal == nil {
		text += "; the host keeps no journal (--journal DIR), so no recording can start"
	}
	return tool.TextResult(text, out), nil
}

// recordingResult is the recording tools' result: the state of sp (the running or last
// span; ok false when there was none), in the reference's field names where they mean the
// same thing.
func (w *worker) recordingResult(s *session, sp recordingSpan, running, ok bool) map[string]any {
	now := w.cfg.Now()
	cfg := w.journal.config()
	out := map[string]any{
		"enabled": running, "recording": running, "active": running,
		"available": w.journal != nil,
		"owner":     s.label,
		"journal":   map[string]any{"kept": w.journal != nil, "screenshots": cfg.GetScreenshots(), "text": cfg.GetKeepText()},
		"name":      nil, "turns": 0, "next_turn": 1,
		"max_turns": nil, "turns_left": nil, "max_duration_ms": nil, "duration_ms": int64(0), "duration_left_ms": nil,
		"started": nil, "stopped": nil, "stop_reason": nil,
		// The reference's fields for a recorder writing files: cua-host writes none.
		"output_dir": nil, "video_active": false, "last_video_path": nil, "last_error": nil,
	}
	if !ok {
		return out
	}
	end := now
	if !running {
		end = sp.stopped
	}
	out["name"], out["turns"], out["started"] = sp.name, sp.turns, sp.started.UTC().Format(time.RFC3339Nano)
	out["duration_ms"] = max(end.Sub(sp.started), 0).Milliseconds()
	if running {
		out["next_turn"] = sp.turns + 1
	} else {
		out["stopped"], out["stop_reason"] = sp.stopped.UTC().Format(time.RFC3339Nano), sp.reason.String()
	}
	if sp.maxTurns > 0 {
		out["max_turns"], out["turns_left"] = sp.maxTurns, 0
		if running {
			out["turns_left"] = sp.maxTurns - sp.turns
		}
	}
	if sp.maxDuration > 0 {
		out["max_duration_ms"], out["duration_left_ms"] = sp.maxDuration.Milliseconds(), int64(0)
		if running {
			out["duration_left_ms"] = max(sp.started.Add(sp.maxDuration).Sub(now), 0).Milliseconds()
		}
	}
	return out
}
