package report

import "encoding/json"

// Recording is what a journal holds of one recording (docs/journal.md#recordings): the
// calls of a session the worker marked with the recording's name, from the worker's
// start_recording to its stop_recording, a budget running out, or the session's end.
type Recording struct {
	Name      string `json:"name"`
	Segment   string `json:"segment"`
	Session   string `json:"session"`
	SessionID string `json:"session_id"`
	// Calls counts the calls of its span; Turns the actions among them.
	Calls int `json:"calls"`
	Turns int `json:"turns"`
	// StopReason is why it stopped when the journal says: max_turns (its last turn says
	// so) or stopped (a stop_recording of the session completed after it). Empty when the
	// journal does not say: its max_duration passed, its session ended, or the journal
	// ends while it runs.
	StopReason string `json:"stop_reason,omitempty"`
	FirstCall  string `json:"first_call,omitempty"`
	LastCall   string `json:"last_call,omitempty"`
}

// tag is the mark the worker puts in the result facts of a call inside a recording.
type tag struct {
	Name       string `json:"name"`
	Turn       int    `json:"turn"`
	StopReason string `json:"stop_reason"`
}

// recordingOf returns the recording mark of a call, or nil.
func recordingOf(c *Call) *tag {
	if len(c.Result) == 0 {
		return nil
	}
	var f struct {
		Recording *tag `json:"recording"`
	}
	if json.Unmarshal(c.Result, &f) != nil || f.Recording == nil || f.Recording.Name == "" {
		return nil
	}
	return f.Recording
}

// KeepRecording narrows r to the calls of the recordings named name (one per session that
// used the name) and lists them in r.Recordings; the summary counts only those calls. It
// reports whether any call belongs to such a recording.
func (r *Report) KeepRecording(name string) bool {
	var kept []Call
	var recs []Recording
	index := map[string]int{} // session id → index in recs
	closed := map[string]bool{}
	for i := range r.Calls {
		c := &r.Calls[i]
		if tg := recordingOf(c); tg != nil && tg.Name == name {
			k, ok := index[c.SessionID]
			if !ok {
				k = len(recs)
				index[c.SessionID] = k
				recs = append(recs, Recording{Name: name, Segment: c.Segment, Session: c.Session, SessionID: c.SessionID})
			}
			rec := &recs[k]
			rec.Calls++
			if tg.Turn > 0 {
				rec.Turns++
			}
			if tg.StopReason != "" {
				rec.StopReason = tg.StopReason
			}
			if rec.FirstCall == "" {
				rec.FirstCall = c.Received
			}
			rec.LastCall = c.Received
			kept = append(kept, *c)
			continue
		}
		// The first stop_recording or start_recording that completed in the session after
		// the span's calls ends what is known of it: a stop_recording stopped it; a
		// start_recording began another (the span had stopped before, unrecorded why).
		k, ok := index[c.SessionID]
		if !ok || closed[c.SessionID] || c.Outcome != "completed" || c.IsError {
			continue
		}
		switch c.Tool {
		case "stop_recording":
			if recs[k].StopReason == "" {
				recs[k].StopReason = "stopped"
			}
			closed[c.SessionID] = true
		case "start_recording":
			closed[c.SessionID] = true
		}
	}
	var sessions []Session
	for _, s := range r.Sessions {
		if _, ok := index[s.ID]; ok {
			sessions = append(sessions, s)
		}
	}
	if kept == nil {
		kept = []Call{}
	}
	if sessions == nil {
		sessions = []Session{}
	}
	r.Recording, r.Recordings, r.Calls, r.Sessions = name, recs, kept, sessions
	r.Summary = summarize(kept)
	return len(kept) > 0
}
