package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/proto/contract"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// CodeJournalUnavailable is the refusal of a call the host's journal could not record:
// the call did not run (NOT_STARTED), so nothing happened that the journal lacks.
const CodeJournalUnavailable = authz.CodeJournalUnavailable

// defaultShotDimension bounds a journal screenshot's longer side when the host names none.
const defaultShotDimension = 640

// maxJournalArgs bounds the arguments an entry carries; larger ones are replaced by their size.
const maxJournalArgs = 64 << 10

// shotMargin is the room kept in a control frame for everything but the screenshot.
const shotMargin = maxJournalArgs + 16<<10

// screenCapturer is what a journal screenshot needs of the desktop backend (*x11.Backend).
type screenCapturer interface {
	Capture(ctx context.Context, opts x11.CaptureOptions) (*x11.Image, error)
}

// journalReporter sends the host one JournalEntry per call that reaches the worker, when
// the host keeps a journal (Hello.journal). A nil *journalReporter reports nothing. It
// never learns where the journal is: it only sends frames on the control channel.
type journalReporter struct {
	w       *worker
	cfg     *cuav1.JournalConfig
	capture screenCapturer // nil: no screenshots
	seq     atomic.Uint64

	// mu guards the fields below.
	mu      sync.Mutex
	waiters map[uint64]chan *cuav1.ControlError
	aborted bool
	// broken is the host's word that its journal cannot record any more: every later
	// call is refused.
	broken string
	// credits counts the BEGIN records the host has reserved room for and not yet
	// received (contract.JournalCreditBatch per JournalAck with call_id 0): while one
	// remains, an action's BEGIN without a screenshot is sent with call_id 0 and the
	// action runs without waiting for the host (ADR 0008).
	credits int
}

// newJournalReporter returns the reporter Hello asks for, or nil.
func newJournalReporter(w *worker, cfg *cuav1.JournalConfig) *journalReporter {
	if cfg == nil {
		return nil
	}
	j := &journalReporter{w: w, cfg: cfg, waiters: map[uint64]chan *cuav1.ControlError{}}
	if cfg.GetScreenshots() {
		if c, ok := w.closer.(screenCapturer); ok {
			j.capture = c
		}
	}
	return j
}

// journalCall is one call the reporter has begun.
type journalCall struct {
	seq      uint64
	label    string
	tool     string
	action   bool
	received time.Time
	authUS   int64
	started  time.Time
	// readOnly calls are reported once, after they ran, with these.
	readOnly bool
	args     []byte
	layer    string
	// rec marks a call inside a recording (nil outside one).
	rec *recordingTag
}

// config returns the host's journal settings, nil when it keeps no journal.
func (j *journalReporter) config() *cuav1.JournalConfig {
	if j == nil {
		return nil
	}
	return j.cfg
}

// refused reports a call refused before it ran (outcome NOT_STARTED). args are the raw
// arguments when req is nil.
func (j *journalReporter) refused(s *session, req *request, name string, raw []byte, received time.Time, authDur time.Duration, code authz.Code, msg string) {
	if j == nil {
		return
	}
	e := &cuav1.JournalEntry{
		Phase: cuav1.JournalPhase_JOURNAL_PHASE_REFUSED, Label: s.label, CallSeq: j.seq.Add(1),
		Tool: name, Decision: "deny", Layer: layerOf(code, msg),
		Outcome: cuav1.Outcome_OUTCOME_NOT_STARTED, RefusalCode: string(code), RefusalMessage: truncateMessage(msg),
		IsError: true, ReceivedUnixUs: received.UnixMicro(), AuthorizeUs: authDur.Microseconds(),
	}
	// A refused call inside a recording is part of its span, never one of its turns.
	if tag := s.recording.enter(e.Tool, false, j.w.cfg.Now()); tag != nil {
		e.Result = resultFacts(nil, nil, tag)
	}
	if req != nil {
		e.Tool = req.name
		e.Arguments = j.arguments(req.name, req.args, raw)
	} else {
		e.Arguments = j.arguments(name, nil, raw)
	}
	j.w.sendControl(0, &cuav1.ControlFrame{Body: &cuav1.ControlFrame_JournalEntry{JournalEntry: e}}, nil)
}

// begin reports an authorized call and waits until the host has written it. A refusal
// means the call must not run: the journal could not record it, or ctx ended first.
func (j *journalReporter) begin(ctx context.Context, s *session, req request, t *tool.Tool, call *tool.Call, received time.Time, authDur time.Duration) (*journalCall, *authz.Refusal) {
	if j == nil {
		return nil, nil
	}
	jc := &journalCall{seq: j.seq.Add(1), label: s.label, tool: t.Name, action: !t.Annotations.ReadOnly, received: received, authUS: authDur.Microseconds()}
	j.mu.Lock()
	broken := j.broken
	j.mu.Unlock()
	if broken != "" {
		return nil, authz.Refuse(CodeJournalUnavailable, "the host's journal cannot record calls: %s", broken)
	}
	if !jc.action {
		// A read-only call changes nothing: nothing to order against, so it is reported
		// once, after it ran, without a round trip to the host before.
		jc.readOnly, jc.args, jc.layer = true, j.arguments(t.Name, call.RunArguments(), nil), "mode:"+s.authority.Mode.String()
		jc.started = time.Now()
		jc.rec = s.recording.enter(t.Name, false, j.w.cfg.Now())
		return jc, nil
	}
	e := &cuav1.JournalEntry{
		Phase: cuav1.JournalPhase_JOURNAL_PHASE_BEGIN, Label: s.label, CallSeq: jc.seq, Tool: t.Name,
		Arguments: j.arguments(t.Name, call.RunArguments(), nil), Decision: "allow", Layer: "mode:" + s.authority.Mode.String(),
		ReceivedUnixUs: received.UnixMicro(), AuthorizeUs: jc.authUS,
	}
	if jc.action {
		e.Target = targetOf(call)
		e.Screenshot = j.screenshot(ctx, len(e.Arguments))
	}
	frame := &cuav1.ControlFrame{Body: &cuav1.ControlFrame_JournalEntry{JournalEntry: e}}
	if e.Screenshot == nil && proto.Size(e) <= contract.JournalCreditEntryMax {
		j.mu.Lock()
		credited := j.credits > 0 && !j.aborted && j.broken == ""
		if credited {
			j.credits--
		}
		j.mu.Unlock()
		if credited {
			// The host reserved room for this record: it is written unless the disk
			// fails despite the reservation, which revokes every credit and refuses every
			// later call.
			if !j.w.sendControl(0, frame, nil) {
				return nil, authz.Refuse(CodeJournalUnavailable, "the call could not be sent to the host's journal")
			}
			jc.started = time.Now()
			jc.rec = s.recording.enter(t.Name, j.w.isTurn(t), j.w.cfg.Now())
			return jc, nil
		}
	}
	ch := make(chan *cuav1.ControlError, 1)
	j.w.mu.Lock()
	j.w.nextCallID++
	id := j.w.nextCallID
	j.w.mu.Unlock()
	j.mu.Lock()
	if j.aborted {
		j.mu.Unlock()
		return nil, authz.Refuse(CodeJournalUnavailable, "the worker is stopping; the journal cannot record the call")
	}
	j.waiters[id] = ch
	j.mu.Unlock()
	if !j.w.sendControl(id, frame, nil) {
		j.forget(id)
		return nil, authz.Refuse(CodeJournalUnavailable, "the call could not be sent to the host's journal")
	}
	select {
	case cerr, ok := <-ch:
		if !ok {
			return nil, authz.Refuse(CodeJournalUnavailable, "the control channel ended before the journal recorded the call")
		}
		if cerr != nil {
			return nil, authz.Refuse(CodeJournalUnavailable, "the host's journal cannot record the call: %s", cerr.GetMessage())
		}
	case <-ctx.Done():
		j.forget(id)
		return nil, authz.Refuse(ctxCode(ctx), "the call ended while the journal recorded it")
	}
	jc.started = time.Now()
	jc.rec = s.recording.enter(t.Name, j.w.isTurn(t), j.w.cfg.Now())
	return jc, nil
}

// end reports the outcome of a call that began.
func (j *journalReporter) end(ctx context.Context, jc *journalCall, out *cuav1.ToolResult) {
	if j == nil || jc == nil {
		return
	}
	e := &cuav1.JournalEntry{
		Phase: cuav1.JournalPhase_JOURNAL_PHASE_END, Label: jc.label, CallSeq: jc.seq, Tool: jc.tool,
		Outcome: out.GetOutcome(), IsError: out.GetIsError(), ReceivedUnixUs: jc.received.UnixMicro(),
		AuthorizeUs: jc.authUS, RunUs: time.Since(jc.started).Microseconds(),
	}
	if jc.readOnly {
		e.Phase, e.Arguments, e.Decision, e.Layer = cuav1.JournalPhase_JOURNAL_PHASE_READ_ONLY, jc.args, "allow", jc.layer
	}
	if r := out.GetRefusal(); r != nil {
		e.RefusalCode, e.RefusalMessage = r.GetCode(), truncateMessage(r.GetMessage())
		e.Decision, e.Layer = "deny", "tool"
	}
	if jc.action || out.GetIsError() || jc.rec != nil {
		e.Result = resultFacts(out.GetStructured(), out.GetDetails(), jc.rec)
	}
	if jc.action {
		// The capture runs after the handler returned, even when ctx ended: the journal
		// shows what the screen looked like afterwards.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		e.Screenshot = j.screenshot(cctx, 0)
		cancel()
	}
	j.w.sendControl(0, &cuav1.ControlFrame{Body: &cuav1.ControlFrame_JournalEntry{JournalEntry: e}}, nil)
}

// deliver hands the host's answer to a begin; it reports whether id was one of ours.
func (j *journalReporter) deliver(id uint64, cerr *cuav1.ControlError) bool {
	if j == nil {
		return false
	}
	if id == 0 && cerr == nil {
		// A grant of credits.
		j.mu.Lock()
		j.credits += contract.JournalCreditBatch
		j.mu.Unlock()
		return true
	}
	if id == 0 && cerr.GetCode() == string(CodeJournalUnavailable) {
		j.mu.Lock()
		j.credits = 0
		if j.broken == "" {
			j.broken = truncateMessage(cerr.GetMessage())
			j.w.log.Error("the host's journal cannot record calls; refusing every call", "reason", j.broken)
		}
		j.mu.Unlock()
		return true
	}
	j.mu.Lock()
	ch, ok := j.waiters[id]
	delete(j.waiters, id)
	j.mu.Unlock()
	if ok {
		ch <- cerr
	}
	return ok
}

func (j *journalReporter) forget(id uint64) {
	j.mu.Lock()
	delete(j.waiters, id)
	j.mu.Unlock()
}

// abort refuses every begin waiting for the host and every later one.
func (j *journalReporter) abort() {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.aborted = true
	for id, ch := range j.waiters {
		close(ch)
		delete(j.waiters, id)
	}
}

// arguments encodes a call's arguments for the journal, text redacted unless the host
// keeps it.
func (j *journalReporter) arguments(name string, args map[string]any, raw []byte) []byte {
	if args == nil {
		if len(raw) == 0 {
			return []byte("{}")
		}
		b, _ := json.Marshal(map[string]int{"undecodable_bytes": len(raw)})
		return b
	}
	if !j.cfg.GetKeepText() && (name == "type_text" || name == "clipboard_write") {
		if text, ok := args["text"].(string); ok {
			red := make(map[string]any, len(args))
			for k, v := range args {
				red[k] = v
			}
			red["text"] = fmt.Sprintf("[redacted: %d characters]", len([]rune(text)))
			args = red
		}
	}
	b, err := json.Marshal(args)
	if err != nil || len(b) > maxJournalArgs {
		b, _ = json.Marshal(map[string]int{"omitted_bytes": len(b)})
	}
	return b
}

// screenshot captures the screen downscaled, or says why it could not.
func (j *journalReporter) screenshot(ctx context.Context, used int) *cuav1.JournalScreenshot {
	if j.capture == nil {
		return nil
	}
	dim := int(j.cfg.GetScreenshotMaxDimension())
	if dim <= 0 {
		dim = defaultShotDimension
	}
	img, err := j.capture.Capture(ctx, x11.CaptureOptions{MaxDimension: dim, Format: x11.PNG})
	if err != nil {
		return &cuav1.JournalScreenshot{Error: truncateMessage(err.Error())}
	}
	if limit := j.w.ctrl.MaxSend() - shotMargin - used; len(img.Data) > limit {
		return &cuav1.JournalScreenshot{Error: fmt.Sprintf("the %d-byte capture does not fit a control frame (%d bytes left)", len(img.Data), limit)}
	}
	return &cuav1.JournalScreenshot{Png: img.Data, Width: int32(img.Width), Height: int32(img.Height), Scale: img.Scale}
}

// targetOf is where an action aims in root coordinates: its point (x,y or from_x,from_y,
// relative to the resolved window when there is one), else the window's frame.
func targetOf(call *tool.Call) *cuav1.JournalRect {
	if call == nil {
		return nil
	}
	num := func(k string) (float64, bool) {
		v, ok := call.Arguments[k].(float64)
		return v, ok
	}
	x, okx := num("x")
	y, oky := num("y")
	if !okx || !oky {
		x, okx = num("from_x")
		y, oky = num("from_y")
	}
	var ox, oy int
	if w := call.Window; w != nil {
		ox, oy = w.Frame.X, w.Frame.Y
		if !okx || !oky {
			return &cuav1.JournalRect{X: int32(w.Frame.X), Y: int32(w.Frame.Y), Width: int32(w.Frame.Width), Height: int32(w.Frame.Height)}
		}
	}
	if !okx || !oky {
		return nil
	}
	return &cuav1.JournalRect{X: int32(ox + int(x)), Y: int32(oy + int(y))}
}

// resultFacts extracts what the journal keeps of a result: from its structured value, then
// from its details, which carry cua-host's own route, delivery, verification and evidence
// where the structured value has the contract's shape (ADR 0010), and the recording the
// call belongs to (rec, nil for none).
func resultFacts(structured, details []byte, rec *recordingTag) []byte {
	if len(structured) == 0 && len(details) == 0 && rec == nil {
		return nil
	}
	var f resultFactsOf
	for _, part := range [][]byte{structured, details} {
		if len(part) > 0 && json.Unmarshal(part, &f) != nil {
			if rec == nil {
				return nil
			}
			f = resultFactsOf{} // the recording tag alone
			break
		}
	}
	b, err := json.Marshal(struct {
		resultFactsOf
		// Recording marks a call inside a recording's span (recording.go): the worker's
		// word, never read from a result.
		Recording *recordingTag `json:"recording,omitempty"`
	}{f, rec})
	if err != nil || string(b) == "{}" || len(b) > maxJournalArgs {
		return nil
	}
	return b
}

// resultFactsOf is what the journal keeps of a result's structured value and details.
type resultFactsOf struct {
	Route     json.RawMessage `json:"route,omitempty"`
	Delivery  json.RawMessage `json:"delivery,omitempty"`
	Verified  json.RawMessage `json:"verified,omitempty"`
	Evidence  json.RawMessage `json:"evidence,omitempty"`
	ErrorCode json.RawMessage `json:"error_code,omitempty"`
	Error     json.RawMessage `json:"error,omitempty"`
	// A launch's process and windows, in the order they appeared: what a replay maps
	// the original run's targets from.
	PID       json.RawMessage `json:"pid,omitempty"`
	WindowIDs json.RawMessage `json:"window_ids,omitempty"`
	Windows   []launchWindow  `json:"windows,omitempty"`
}

// launchWindow is what the journal keeps of a launched window.
type launchWindow struct {
	ID    uint32 `json:"window_id"`
	Title string `json:"title,omitempty"`
}

// layerOf names the pipeline stage a refusal code comes from (docs/security.md).
func layerOf(code authz.Code, msg string) string {
	switch code {
	case authz.CodeSessionEnded, authz.CodeAuthorizationRevoked, authz.CodeAuthorizationExpired:
		return "session"
	case authz.CodeSelfTargetDenied, authz.CodeProtectedUIDenied:
		return "invariant"
	case authz.CodePermissionDenied:
		switch {
		case strings.Contains(msg, "managed policy"):
			return "policy:managed"
		case strings.Contains(msg, "user policy"):
			return "policy:user"
		}
		return "policy"
	case authz.CodeUnclassifiedTool, authz.CodeUnsupported, authz.CodeUnknownTool:
		return "inventory"
	case authz.CodeOutsideManifest, authz.CodeManifestDenied, authz.CodeForeignProcessTermination,
		authz.CodeAuthorizationRequired, authz.CodeAuthorizationDeclined:
		return "mode"
	case authz.CodeDeadlineExceeded, authz.CodeCanceled, authz.CodeTooManyRequests:
		return "dispatch"
	case authz.CodeJournalUnavailable:
		return "journal"
	}
	return "tool"
}
