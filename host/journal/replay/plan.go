// Package replay re-runs a journal's completed actions on a display (docs/journal.md,
// "Replay"): in order, each in a session of the recorded mode and manifest, with the
// original run's processes and windows mapped to the ones the replay launched, stopping
// at the first step whose target cannot be found or that does not complete.
package replay

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/cua-host/cua-host/host/journal"
)

// SessionPlan is one session of the journal, as the replay recreates it.
type SessionPlan struct {
	// Segment and ID identify the original session; Label, Mode and Manifest describe it.
	Segment  string
	ID       string
	Label    string
	Mode     string
	Manifest []byte
}

// StepPlan is one call of the journal: an action the replay runs, or one it skips.
type StepPlan struct {
	// N numbers the steps from 1.
	N int
	// Segment and Record locate the call's call_begin record.
	Segment string
	Record  uint64
	Session *SessionPlan
	CallSeq uint64
	Tool    string
	// Arguments are the recorded arguments (the original run's targets).
	Arguments json.RawMessage
	// Skip says why the step is not run (its original outcome was not a success); empty
	// for a step to run.
	Skip string
	// Launched is what the original call_end says a launch_app started, when it says.
	Launched *Launched
	// Gap is the time between the previous call's end and this call's begin in the
	// original run.
	Gap time.Duration
}

// Launched is what a launch_app result says about the process and its windows.
type Launched struct {
	PID       int      `json:"pid"`
	WindowIDs []uint32 `json:"window_ids"`
	Windows   []struct {
		ID    uint32 `json:"window_id"`
		Title string `json:"title"`
	} `json:"windows"`
}

// Plan is what a journal asks a replay to do.
type Plan struct {
	Dir      string
	Segments []string
	Sessions []*SessionPlan
	Steps    []*StepPlan
}

// Error is a journal the replay refuses: it does not verify, or it lacks what a step
// needs. Step is the step concerned, when there is one.
type Error struct {
	Step    *StepPlan
	Message string
}

func (e *Error) Error() string {
	if e.Step == nil {
		return "replay: " + e.Message
	}
	s := e.Step
	return fmt.Sprintf("replay: step %d (record %d of segment %s, %s of session %s): %s", s.N, s.Record, s.Segment, s.Tool, s.Session.Label, e.Message)
}

var redactedText = regexp.MustCompile(`^\[redacted: [0-9]+ characters\]$`)

// redactedTools are the tools whose text the journal redacts unless it keeps text.
var redactedTools = map[string]bool{"type_text": true, "clipboard_write": true}

// Load reads and checks the journal in dir: every segment must verify (a segment that was
// cut off replays up to where it ends; a tampered one refuses the whole journal), every
// step to run must have its arguments, and a bounded session its manifest.
func Load(dir string) (*Plan, error) {
	rep, err := journal.Verify(dir)
	if err != nil {
		return nil, &Error{Message: err.Error()}
	}
	for _, s := range rep.Segments {
		if !s.Intact {
			msg := "it does not verify"
			if len(s.Problems) > 0 {
				msg = s.Problems[0].String()
			}
			return nil, &Error{Message: fmt.Sprintf("segment %s does not verify (%s): a journal that may have been altered is not replayed", s.ID, msg)}
		}
	}
	segs, err := journal.Segments(dir)
	if err != nil {
		return nil, &Error{Message: err.Error()}
	}
	p := &Plan{Dir: dir, Segments: segs}
	for _, segDir := range segs {
		seg, err := journal.ReadSegment(segDir)
		if err != nil {
			return nil, &Error{Message: err.Error()}
		}
		if err := p.addSegment(seg); err != nil {
			return nil, err
		}
	}
	return p, nil
}

type callKey struct {
	session string
	seq     uint64
}

func (p *Plan) addSegment(seg *journal.Segment) error {
	keepText := false
	sessions := map[string]*SessionPlan{}
	ends := map[callKey]*journal.Record{}
	for i := range seg.Records {
		r := &seg.Records[i]
		if r.Kind == journal.KindCallEnd {
			ends[callKey{r.Session.ID, r.Call.Seq}] = r
		}
	}
	var lastEnd time.Time
	for i := range seg.Records {
		r := &seg.Records[i]
		switch r.Kind {
		case journal.KindJournalStart:
			keepText = r.Start.KeepText
		case journal.KindSessionStart:
			sp := &SessionPlan{Segment: r.Segment, ID: r.Session.ID, Label: r.Session.Label, Mode: r.Session.Mode}
			if r.Manifest != "" {
				sp.Manifest = []byte(r.Manifest)
			} else if r.Session.ManifestSHA256 != "" {
				sp.Manifest = nil // checked when a step of the session runs
			}
			sessions[sp.ID] = sp
			p.Sessions = append(p.Sessions, sp)
		case journal.KindCallEnd, journal.KindCallReadOnly, journal.KindCallRefused:
			lastEnd = recordTime(r)
		case journal.KindCallBegin:
			sp := sessions[r.Session.ID]
			st := &StepPlan{N: len(p.Steps) + 1, Segment: r.Segment, Record: r.Seq, Session: sp, CallSeq: r.Call.Seq, Tool: r.Call.Tool, Arguments: r.Call.Arguments}
			if t := recordTime(r); !lastEnd.IsZero() && t.After(lastEnd) {
				st.Gap = t.Sub(lastEnd)
			}
			p.Steps = append(p.Steps, st)
			end := ends[callKey{r.Session.ID, r.Call.Seq}]
			switch {
			case end == nil || end.Call.Outcome == "unknown":
				st.Skip = "the original call's outcome is unknown"
			case end.Call.Outcome != "completed":
				st.Skip = "the original call did not run (" + end.Call.Outcome + ")"
			case end.Call.IsError || end.Call.Refusal != nil:
				st.Skip = "the original call failed"
			}
			if st.Skip != "" {
				continue
			}
			if st.Tool == "launch_app" && len(end.Call.Result) > 0 {
				var l Launched
				if json.Unmarshal(end.Call.Result, &l) == nil && l.PID > 0 {
					st.Launched = &l
				}
			}
			if err := checkArguments(st, keepText); err != nil {
				return err
			}
			if sp.Manifest == nil && r.Session.ManifestSHA256 != "" {
				return &Error{Step: st, Message: "the session was bounded by a manifest this journal (format 1) does not hold; it cannot be recreated"}
			}
		}
	}
	return nil
}

// checkArguments refuses a step whose recorded arguments are not the ones it ran with.
func checkArguments(st *StepPlan, keepText bool) error {
	var args map[string]any
	if err := json.Unmarshal(st.Arguments, &args); err != nil || args == nil {
		return &Error{Step: st, Message: "its arguments are not a JSON object"}
	}
	for _, k := range []string{"omitted_bytes", "undecodable_bytes"} {
		if _, ok := args[k]; ok && len(args) == 1 {
			return &Error{Step: st, Message: "its arguments were too large or undecodable and were not recorded"}
		}
	}
	if redactedTools[st.Tool] && !keepText {
		if text, ok := args["text"].(string); ok && redactedText.MatchString(text) {
			return &Error{Step: st, Message: fmt.Sprintf("its text was redacted when the journal was recorded (%s); record with --journal-text to replay it", strings.Trim(text, "[]"))}
		}
	}
	return nil
}

func recordTime(r *journal.Record) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, r.Time)
	return t
}
