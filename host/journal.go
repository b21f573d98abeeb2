package host

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host/journal"
	"github.com/cua-host/cua-host/proto/contract"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// JournalOptions asks the host to keep a journal (docs/journal.md): every call that reaches
// the worker is recorded by the host, in a hash-chained segment of Dir that only the host
// holds open.
type JournalOptions struct {
	// Dir is the journal directory; Start adds a segment to it.
	Dir string
	// KeepText keeps type_text text and clipboard_write content; by default the worker
	// replaces them with their length before the entry leaves it.
	KeepText bool
	// Screenshots records a downscaled screen capture before and after every action.
	Screenshots bool
	// ScreenshotMaxDimension bounds a screenshot's longer side; zero means 640.
	ScreenshotMaxDimension int
	// MaxShots and MaxShotBytes are each session's screenshot budget; beyond it the oldest
	// screenshots (never records) are removed. Zero means the journal package's defaults,
	// negative no limit.
	MaxShots     int
	MaxShotBytes int64
	// Version is recorded in the segment's first record.
	Version string
	// Synchronous makes every action wait for the host to acknowledge its begin record
	// before it runs: the host grants the worker no credits (ADR 0008). It costs a round
	// trip on the control channel per action; it also covers the host being killed
	// between the worker's report and its write, which credits leave to the segment's
	// missing end.
	Synchronous bool
}

type pendingSession struct {
	id       journal.Session
	manifest string
}

// hostJournal is the host's side of the journal: the writer and what it knows of the
// sessions and calls it records.
type hostJournal struct {
	w   *journal.Writer
	log *slog.Logger

	// mu guards the fields below.
	mu sync.Mutex
	// pending holds the identities of sessions asked for and not yet confirmed, by label,
	// with their manifests.
	pending map[string]pendingSession
	// live holds the open sessions' identities, by label.
	live map[string]*journal.Session
	// open holds the calls that began and have no outcome yet, per session label.
	open map[string]map[uint64]string
	// crediting is set while the host grants the worker credits; a reservation that
	// failed clears it for good.
	crediting bool
}

func openJournal(opts *JournalOptions, log *slog.Logger) (*hostJournal, error) {
	w, err := journal.Open(journal.Options{
		Dir: opts.Dir, KeepText: opts.KeepText, Screenshots: opts.Screenshots,
		MaxShots: opts.MaxShots, MaxShotBytes: opts.MaxShotBytes, Version: opts.Version, Logger: log,
	})
	if err != nil {
		return nil, err
	}
	return &hostJournal{w: w, log: log, pending: map[string]pendingSession{}, live: map[string]*journal.Session{}, open: map[string]map[uint64]string{}, crediting: !opts.Synchronous}, nil
}

func journalConfig(opts *JournalOptions) *cuav1.JournalConfig {
	if opts == nil {
		return nil
	}
	return &cuav1.JournalConfig{KeepText: opts.KeepText, Screenshots: opts.Screenshots, ScreenshotMaxDimension: uint32(max(opts.ScreenshotMaxDimension, 0))}
}

// expect notes the identity of a session about to be created.
func (j *hostJournal) expect(spec SessionSpec, generation, manifestSHA string) {
	if j == nil {
		return
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	j.mu.Lock()
	defer j.mu.Unlock()
	j.pending[spec.Label] = pendingSession{id: journal.Session{
		ID: hex.EncodeToString(id[:]), Label: spec.Label, Mode: spec.Mode.String(),
		Generation: generation, ManifestSHA256: manifestSHA,
	}, manifest: string(spec.Manifest)}
}

func (j *hostJournal) forget(label string) {
	if j == nil {
		return
	}
	j.mu.Lock()
	delete(j.pending, label)
	j.mu.Unlock()
}

// created records session_start when the worker confirms a session. It runs on the
// control reader, before any entry of the session can be read.
func (j *hostJournal) created(c *cuav1.SessionCreated) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	p, ok := j.pending[c.GetLabel()]
	if !ok {
		return
	}
	id := p.id
	delete(j.pending, c.GetLabel())
	if old := j.live[c.GetLabel()]; old != nil {
		j.endLocked(old, "ended", "")
	}
	id.ExpiresAt = time.UnixMilli(c.GetExpiresAtUnixMs()).UTC().Format(time.RFC3339)
	j.live[id.Label] = &id
	if err := j.w.Append(journal.Record{Kind: journal.KindSessionStart, Session: &id, Manifest: p.manifest}, nil); err != nil {
		j.log.Error("journal: record session start", "label", id.Label, "err", err)
	}
}

// revoked records session_end for sessions the worker revoked.
func (j *hostJournal) revoked(labels []string) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, l := range labels {
		if s := j.live[l]; s != nil {
			j.endLocked(s, journal.ReasonRevoked, "the session was revoked while the call ran")
		}
	}
}

// endLocked records the unknown outcome of the session's open calls and its end.
func (j *hostJournal) endLocked(s *journal.Session, reason, note string) {
	open := j.open[s.Label]
	seqs := make([]uint64, 0, len(open))
	for seq := range open {
		seqs = append(seqs, seq)
	}
	sort.Slice(seqs, func(a, b int) bool { return seqs[a] < seqs[b] })
	for _, seq := range seqs {
		rec := journal.Record{Kind: journal.KindCallEnd, Session: s, Call: &journal.Call{Seq: seq, Tool: open[seq], Outcome: "unknown", Note: note}}
		if err := j.w.AppendClosing(rec); err != nil {
			j.log.Error("journal: record unknown outcome", "label", s.Label, "err", err)
		}
	}
	delete(j.open, s.Label)
	delete(j.live, s.Label)
	if err := j.w.AppendClosing(journal.Record{Kind: journal.KindSessionEnd, Session: s, End: &journal.End{Reason: reason}}); err != nil {
		j.log.Error("journal: record session end", "label", s.Label, "err", err)
	}
}

// entry records one JournalEntry from the worker. An error means it was not recorded.
// A credited entry is a BEGIN sent against a credit: its action is already running.
func (j *hostJournal) entry(e *cuav1.JournalEntry, credited bool) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.live[e.GetLabel()]
	if s == nil {
		return fmt.Errorf("journal entry for %q, which is no open session", e.GetLabel())
	}
	c := &journal.Call{
		Seq: e.GetCallSeq(), Tool: e.GetTool(), Decision: e.GetDecision(), Layer: e.GetLayer(),
		IsError: e.GetIsError(), AuthorizeUS: e.GetAuthorizeUs(), RunUS: e.GetRunUs(),
	}
	if us := e.GetReceivedUnixUs(); us > 0 {
		c.Received = time.UnixMicro(us).UTC().Format(time.RFC3339Nano)
	}
	if a := e.GetArguments(); len(a) > 0 {
		if !json.Valid(a) {
			return errors.New("journal entry with arguments that are not JSON")
		}
		c.Arguments = a
	}
	if r := e.GetResult(); len(r) > 0 && json.Valid(r) {
		c.Result = r
	}
	if code := e.GetRefusalCode(); code != "" {
		c.Refusal = &journal.Refusal{Code: code, Message: e.GetRefusalMessage()}
	}
	if t := e.GetTarget(); t != nil {
		c.Target = &journal.Rect{X: int(t.GetX()), Y: int(t.GetY()), Width: int(t.GetWidth()), Height: int(t.GetHeight())}
	}
	var png []byte
	if sh := e.GetScreenshot(); sh != nil {
		c.Screenshot = &journal.Shot{Width: int(sh.GetWidth()), Height: int(sh.GetHeight()), Scale: sh.GetScale(), Error: sh.GetError()}
		png = sh.GetPng()
		if len(png) == 0 && c.Screenshot.Error == "" {
			c.Screenshot.Error = "empty capture"
		}
	}
	rec := journal.Record{Session: s, Call: c}
	switch e.GetPhase() {
	case cuav1.JournalPhase_JOURNAL_PHASE_BEGIN:
		rec.Kind = journal.KindCallBegin
	case cuav1.JournalPhase_JOURNAL_PHASE_END:
		rec.Kind = journal.KindCallEnd
		c.Outcome = outcomeName(e.GetOutcome())
		if _, ok := j.open[s.Label][c.Seq]; !ok {
			return fmt.Errorf("journal entry ends call %d of %q, which did not begin", c.Seq, s.Label)
		}
	case cuav1.JournalPhase_JOURNAL_PHASE_REFUSED:
		rec.Kind = journal.KindCallRefused
		c.Outcome = outcomeName(cuav1.Outcome_OUTCOME_NOT_STARTED)
	case cuav1.JournalPhase_JOURNAL_PHASE_READ_ONLY:
		rec.Kind = journal.KindCallReadOnly
		c.Outcome = outcomeName(e.GetOutcome())
	default:
		return fmt.Errorf("journal entry with phase %v", e.GetPhase())
	}
	appendRec := j.w.Append
	if credited {
		appendRec = j.w.AppendCredited
	}
	if err := appendRec(rec, png); err != nil {
		return err
	}
	switch rec.Kind {
	case journal.KindCallBegin:
		if j.open[s.Label] == nil {
			j.open[s.Label] = map[uint64]string{}
		}
		j.open[s.Label][c.Seq] = c.Tool
	case journal.KindCallEnd:
		delete(j.open[s.Label], c.Seq)
	}
	return nil
}

func outcomeName(o cuav1.Outcome) string {
	switch o {
	case cuav1.Outcome_OUTCOME_NOT_STARTED:
		return "not_started"
	case cuav1.Outcome_OUTCOME_COMPLETED:
		return "completed"
	}
	return "unknown"
}

// close ends every open session (worker lost or host closed) and the segment.
func (j *hostJournal) close(lost bool) {
	if j == nil {
		return
	}
	j.mu.Lock()
	labels := make([]string, 0, len(j.live))
	for l := range j.live {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	reason, note := journal.ReasonHostClosed, "the host closed the worker while the call ran"
	if lost {
		reason, note = journal.ReasonWorkerLost, "the worker was lost while the call ran"
	}
	for _, l := range labels {
		j.endLocked(j.live[l], reason, note)
	}
	j.mu.Unlock()
	if err := j.w.Close("host_closed"); err != nil {
		j.log.Error("journal: close", "err", err)
	}
}

// grant reserves room for a batch of credited records and tells the worker it holds
// them (a JournalAck with call_id 0, contract.JournalCreditBatch records). It runs on the
// control reader, or before it starts; a failed reservation ends crediting for good, and
// the worker then waits for each BEGIN's acknowledgement once its credits are spent.
func (h *Host) grantJournalCredits(batches int) {
	j := h.journal
	for range batches {
		if !j.crediting {
			return
		}
		if err := j.w.Grant(contract.JournalCreditBatch); err != nil {
			j.crediting = false
			h.log.Warn("journal: cannot reserve space for credits; every action now waits for its record", "err", err)
			return
		}
		frame := &cuav1.ControlFrame{ProtocolVersion: h.version, Body: &cuav1.ControlFrame_JournalAck{JournalAck: &cuav1.JournalAck{}}}
		if err := h.ctrl.Send(frame, nil); err != nil {
			h.log.Debug("journal: grant credits", "err", err)
			return
		}
	}
}

// serveJournal records an entry and, for a BEGIN, tells the worker whether it may run the
// call. It runs on the control reader. A BEGIN with call_id 0 was sent against a credit:
// its action did not wait; once a batch of credits is spent, another is granted.
func (h *Host) serveJournal(callID uint64, e *cuav1.JournalEntry) {
	credited := e.GetPhase() == cuav1.JournalPhase_JOURNAL_PHASE_BEGIN && callID == 0
	err := h.journal.entry(e, credited)
	if err != nil {
		h.log.Error("journal: record call", "label", e.GetLabel(), "tool", e.GetTool(), "phase", e.GetPhase().String(), "err", err)
	}
	if credited && err == nil && h.journal.w.Credits() <= contract.JournalCreditBatch {
		h.grantJournalCredits(1)
	}
	begin := e.GetPhase() == cuav1.JournalPhase_JOURNAL_PHASE_BEGIN && callID != 0
	if !begin && err == nil {
		return
	}
	if !begin {
		// An entry sent without waiting was lost: from now on the worker refuses every
		// call, so nothing more runs unrecorded.
		callID = 0
	}
	frame := &cuav1.ControlFrame{ProtocolVersion: h.version, CallId: callID, Body: &cuav1.ControlFrame_JournalAck{JournalAck: &cuav1.JournalAck{}}}
	if err != nil {
		frame.Body = &cuav1.ControlFrame_Error{Error: &cuav1.ControlError{Code: string(authz.CodeJournalUnavailable), Message: err.Error()}}
	}
	if serr := h.ctrl.Send(frame, nil); serr != nil {
		h.log.Debug("journal: answer the worker", "err", serr)
	}
}

// JournalDir returns the directory of this host's journal segment, or "" without a journal.
func (h *Host) JournalDir() string {
	if h.journal == nil {
		return ""
	}
	return h.journal.w.Dir()
}
