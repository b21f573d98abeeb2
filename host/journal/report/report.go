// Package report turns a journal into something a person or a program can look at: one
// self-contained HTML file (inline style and script, screenshots as data: URIs, nothing
// loaded from anywhere) or JSON. It reads journals; it never writes one.
package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/cua-host/cua-host/host/journal"
)

// Report is a journal's calls in order, with a summary and what verification found.
type Report struct {
	Dir      string                  `json:"dir"`
	OK       bool                    `json:"ok"`
	Segments []journal.SegmentReport `json:"segments"`
	Sessions []Session               `json:"sessions"`
	Calls    []Call                  `json:"calls"`
	Summary  Summary                 `json:"summary"`
	// Recording is the recording KeepRecording narrowed the report to, and Recordings
	// what the journal holds of it; both empty otherwise.
	Recording  string      `json:"recording,omitempty"`
	Recordings []Recording `json:"recordings,omitempty"`
}

// Session is one session of the journal.
type Session struct {
	Segment string `json:"segment"`
	journal.Session
	Started string `json:"started"`
	Ended   string `json:"ended,omitempty"`
	Reason  string `json:"end_reason,omitempty"`
}

// Call is one call: its begin and end (or its refusal) merged.
type Call struct {
	Segment   string           `json:"segment"`
	Session   string           `json:"session"`
	SessionID string           `json:"session_id"`
	Seq       uint64           `json:"seq"`
	Record    uint64           `json:"record"`
	Tool      string           `json:"tool"`
	Arguments json.RawMessage  `json:"arguments,omitempty"`
	Decision  string           `json:"decision,omitempty"`
	Layer     string           `json:"layer,omitempty"`
	Outcome   string           `json:"outcome"`
	Refusal   *journal.Refusal `json:"refusal,omitempty"`
	IsError   bool             `json:"is_error,omitempty"`
	Received  string           `json:"received,omitempty"`
	// DurationUS is authorization plus handler time.
	DurationUS int64           `json:"duration_us"`
	Result     json.RawMessage `json:"result,omitempty"`
	Before     *Shot           `json:"before,omitempty"`
	After      *Shot           `json:"after,omitempty"`
	Target     *journal.Rect   `json:"target,omitempty"`
	Note       string          `json:"note,omitempty"`
}

// Shot is a screenshot of a call and where its file is (empty when pruned or missing).
type Shot struct {
	journal.Shot
	Path string `json:"path,omitempty"`
	// Pruned is true when the budget removed the file.
	Pruned bool `json:"pruned,omitempty"`
}

// Summary counts the calls.
type Summary struct {
	Calls     int            `json:"calls"`
	Outcomes  map[string]int `json:"outcomes"`
	Refusals  map[string]int `json:"refusals_by_code"`
	Errors    int            `json:"tool_errors"`
	PerTool   []ToolTime     `json:"time_per_tool"`
	FirstCall string         `json:"first_call,omitempty"`
	LastCall  string         `json:"last_call,omitempty"`
}

// ToolTime is the calls of one tool and their total time.
type ToolTime struct {
	Tool    string `json:"tool"`
	Calls   int    `json:"calls"`
	TotalUS int64  `json:"total_us"`
}

// Build reads and verifies every segment of a journal directory, and the links between
// them, and merges its records into calls. Records after a segment's first bad one are not
// used.
func Build(dir string) (*Report, error) {
	paths, err := journal.Segments(dir)
	if err != nil {
		return nil, err
	}
	r := &Report{Dir: dir, OK: true, Calls: []Call{}, Sessions: []Session{}}
	segs := make([]*journal.Segment, 0, len(paths))
	for _, p := range paths {
		seg, err := journal.ReadSegment(p)
		if err != nil {
			return nil, err
		}
		segs = append(segs, seg)
	}
	if len(paths) > 1 || paths[0] != dir { // not one segment's directory given alone
		journal.CheckLinks(segs)
	}
	for _, seg := range segs {
		r.Segments = append(r.Segments, seg.Report)
		if !seg.Report.OK() {
			r.OK = false
		}
		addSegment(r, seg)
	}
	r.Summary = summarize(r.Calls)
	return r, nil
}

func addSegment(r *Report, seg *journal.Segment) {
	pruned := map[string]bool{}
	for _, rec := range seg.Records {
		if rec.Kind == journal.KindPrune {
			for _, sha := range rec.Pruned {
				pruned[sha] = true
			}
		}
	}
	shot := func(s *journal.Shot) *Shot {
		if s == nil {
			return nil
		}
		out := &Shot{Shot: *s}
		if s.SHA256 != "" {
			p := seg.ShotPath(s.SHA256)
			if _, err := os.Stat(p); err == nil {
				out.Path = p
			} else {
				out.Pruned = pruned[s.SHA256]
			}
		}
		return out
	}
	open := map[string]int{} // session id/seq → index in r.Calls
	sessions := map[string]int{}
	for _, rec := range seg.Records {
		switch rec.Kind {
		case journal.KindSessionStart:
			sessions[rec.Session.ID] = len(r.Sessions)
			r.Sessions = append(r.Sessions, Session{Segment: seg.Report.ID, Session: *rec.Session, Started: rec.Time})
		case journal.KindSessionEnd:
			if i, ok := sessions[rec.Session.ID]; ok {
				r.Sessions[i].Ended, r.Sessions[i].Reason = rec.Time, rec.End.Reason
			}
		case journal.KindCallBegin, journal.KindCallRefused, journal.KindCallReadOnly:
			c := rec.Call
			call := Call{
				Segment: seg.Report.ID, Session: rec.Session.Label, SessionID: rec.Session.ID, Seq: c.Seq, Record: rec.Seq,
				Tool: c.Tool, Arguments: c.Arguments, Decision: c.Decision, Layer: c.Layer, Outcome: "unknown",
				Refusal: c.Refusal, IsError: c.IsError, Received: c.Received, DurationUS: c.AuthorizeUS, Before: shot(c.Screenshot), Target: c.Target,
			}
			if rec.Kind != journal.KindCallBegin {
				call.Outcome, call.Result, call.DurationUS = c.Outcome, c.Result, c.AuthorizeUS+c.RunUS
			} else {
				open[key(rec.Session.ID, c.Seq)] = len(r.Calls)
			}
			r.Calls = append(r.Calls, call)
		case journal.KindCallEnd:
			c := rec.Call
			i, ok := open[key(rec.Session.ID, c.Seq)]
			if !ok {
				continue
			}
			delete(open, key(rec.Session.ID, c.Seq))
			call := &r.Calls[i]
			call.Outcome = c.Outcome
			call.IsError = c.IsError
			call.Result = c.Result
			call.Note = c.Note
			call.After = shot(c.Screenshot)
			call.DurationUS = c.AuthorizeUS + c.RunUS
			if c.Refusal != nil {
				call.Refusal, call.Decision, call.Layer = c.Refusal, c.Decision, c.Layer
			}
		}
	}
	for _, i := range open {
		if r.Calls[i].Note == "" {
			r.Calls[i].Note = "no outcome recorded: the journal was cut off while the call ran"
		}
	}
}

func key(session string, seq uint64) string { return fmt.Sprintf("%s/%d", session, seq) }

func summarize(calls []Call) Summary {
	s := Summary{Calls: len(calls), Outcomes: map[string]int{}, Refusals: map[string]int{}}
	per := map[string]*ToolTime{}
	for _, c := range calls {
		s.Outcomes[c.Outcome]++
		if c.Refusal != nil {
			s.Refusals[c.Refusal.Code]++
		} else if c.IsError {
			s.Errors++
		}
		t := per[c.Tool]
		if t == nil {
			t = &ToolTime{Tool: c.Tool}
			per[c.Tool] = t
		}
		t.Calls++
		t.TotalUS += c.DurationUS
		if c.Received != "" {
			if s.FirstCall == "" || c.Received < s.FirstCall {
				s.FirstCall = c.Received
			}
			if c.Received > s.LastCall {
				s.LastCall = c.Received
			}
		}
	}
	for _, t := range per {
		s.PerTool = append(s.PerTool, *t)
	}
	sort.Slice(s.PerTool, func(i, j int) bool {
		if s.PerTool[i].TotalUS != s.PerTool[j].TotalUS {
			return s.PerTool[i].TotalUS > s.PerTool[j].TotalUS
		}
		return s.PerTool[i].Tool < s.PerTool[j].Tool
	})
	return s
}

// WriteJSON writes the report as one indented JSON object.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// readShot returns a screenshot's bytes when its file still matches its name.
func readShot(s *Shot) ([]byte, bool) {
	if s == nil || s.Path == "" {
		return nil, false
	}
	b, err := os.ReadFile(s.Path)
	if err != nil {
		return nil, false
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:]) == s.SHA256
}

func fmtUS(us int64) string {
	return (time.Duration(us) * time.Microsecond).Round(10 * time.Microsecond).String()
}
