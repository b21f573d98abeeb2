package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cua-host/cua-host/host"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
)

// replyBound is how long the harness waits for any reply or end-of-file.
const replyBound = 5 * time.Second

// result collects one round's observations.
type result struct {
	envelopes  int
	victims    int
	bystander  int
	reactions  map[string]int
	violations []string
	// repros are the victim sequences that produced violations.
	repros []*victimSeq
}

func newResult() *result { return &result{reactions: map[string]int{}} }

func (r *result) note(what, observed string) {
	r.reactions[fmt.Sprintf("%-44s → %s", what, observed)]++
}

// ledger is the side-effect oracle's bookkeeping for one marker file.
type ledger struct {
	mu sync.Mutex
	// must: COMPLETED calls; mustNot: NOT_STARTED calls; maybe: UNKNOWN or lost calls.
	must, mustNot, maybe map[string]string
}

func newLedger() *ledger {
	return &ledger{must: map[string]string{}, mustNot: map[string]string{}, maybe: map[string]string{}}
}

func (l *ledger) record(marker, outcome, why string) {
	if marker == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch outcome {
	case "COMPLETED":
		l.must[marker] = why
	case "NOT_STARTED":
		l.mustNot[marker] = why
	default:
		l.maybe[marker] = why
	}
}

// check compares the marker file with the ledger.
func (l *ledger) check(path string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	written := map[string]bool{}
	if b, err := os.ReadFile(path); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if line != "" {
				written[line] = true
			}
		}
	}
	var out []string
	for m, why := range l.must {
		if !written[m] {
			out = append(out, fmt.Sprintf("marker %s: COMPLETED (%s) but not written", m, why))
		}
	}
	for m, why := range l.mustNot {
		if written[m] {
			out = append(out, fmt.Sprintf("marker %s: NOT_STARTED (%s) but written", m, why))
		}
	}
	for m := range written {
		_, a := l.must[m]
		_, b := l.maybe[m]
		if !a && !b {
			out = append(out, fmt.Sprintf("marker %s written, but no call that may have run wrote it", m))
		}
	}
	slices.Sort(out)
	return out
}

// round is one worker's life: bystander sessions calling steadily, and victim channels
// driven with generated envelopes one after another.
type round struct {
	ctx     context.Context
	h       *host.Host
	gen     []byte
	dir     string
	markers string
	led     *ledger
	res     *result
	logs    *logCapture
	seed    uint64
	next    func() uint64
	huge    bool
	nvictim int
}

// victim is one session channel under fuzz.
type victim struct {
	seq    *victimSeq
	label  string
	sc     *wire.SessionConn
	file   *os.File
	m      *smodel
	lastID uint64
	// pending are requests whose reply has not come, by id; an id may await two
	// replies (a call in flight and the refusal of a replay of its id).
	pending map[uint64][]*sexpect
	done    bool
	marks   int
}

func (rd *round) violate(v *victim, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if v != nil {
		msg = fmt.Sprintf("seed=%d victim=%d (%s): %s", v.seq.Seed, v.seq.Index, v.label, msg)
		if !slices.Contains(rd.res.repros, v.seq) {
			rd.res.repros = append(rd.res.repros, v.seq)
		}
	}
	rd.res.violations = append(rd.res.violations, msg)
}

func (rd *round) newVictim(seq *victimSeq) (*victim, error) {
	rd.nvictim++
	label := fmt.Sprintf("victim-%d", rd.nvictim)
	ctx, cancel := context.WithTimeout(rd.ctx, replyBound)
	defer cancel()
	f, _, err := rd.h.CreateSessionChannel(ctx, host.SessionSpec{Label: label})
	if err != nil {
		return nil, err
	}
	sc, err := wire.NewSessionConn(f)
	if err != nil {
		return nil, err
	}
	return &victim{seq: seq, label: label, sc: sc, file: f, m: newSModel(rd.gen, rd.markers), pending: map[uint64][]*sexpect{}}, nil
}

func (rd *round) runVictim(seq *victimSeq) {
	v, err := rd.newVictim(seq)
	if err != nil {
		rd.violate(nil, "create victim session: %v", err)
		return
	}
	defer v.sc.Close()
	rd.res.victims++
	for i, st := range seq.Steps {
		if v.done || rd.ctx.Err() != nil {
			break
		}
		rd.step(v, i, st)
	}
	if !v.done {
		rd.closeVictim(v, "end of sequence")
	}
}

func (rd *round) holds(v *victim) []uint64 {
	var out []uint64
	for id, es := range v.pending {
		for _, e := range es {
			if e.hold {
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return out
}

func (rd *round) renderCtx(v *victim, marker string) renderCtx {
	return renderCtx{gen: rd.gen, lastID: v.lastID, holds: rd.holds(v), markerPath: rd.markers, marker: marker, now: time.Now()}
}

func (rd *round) marker(v *victim) string {
	v.marks++
	return fmt.Sprintf("v%d-%d-%d", rd.seed, v.seq.Index, v.marks)
}

func (rd *round) step(v *victim, i int, st sstep) {
	switch st.Op {
	case "close":
		rd.closeVictim(v, "harness closed the channel")
		return
	case "cancel-holds":
		for _, id := range rd.holds(v) {
			c := sstep{Op: "env", ID: "next", Version: 1, Gen: "ok", Body: "cancel"}
			env, nid := c.envelope(rd.renderCtx(v, ""))
			env.GetCancel().RequestId = id
			v.lastID = max(v.lastID, nid)
			if !rd.sendAndCheck(v, i, c.frame(env), false) {
				return
			}
		}
		// Only cancels the worker could read (no partial frame before them) end holds.
		rd.awaitSync(v, i)
		return
	case "flood":
		for range st.Count {
			h := sstep{Op: "env", ID: "next", Version: 1, Gen: "ok", Body: "call", Tool: "sleep", HoldMS: 30000, Args: "ok"}
			env, nid := h.envelope(rd.renderCtx(v, ""))
			v.lastID = max(v.lastID, nid)
			if !rd.sendAndCheck(v, i, h.frame(env), true) {
				return
			}
		}
		rd.awaitSync(v, i)
		return
	case "raw":
		rd.sendAndCheck(v, i, st.Raw, false)
		return
	}
	marker := rd.marker(v)
	env, id := st.envelope(rd.renderCtx(v, marker))
	if id > v.lastID {
		v.lastID = id
	}
	b := st.frame(env)
	if st.Op == "split" {
		rd.sendSplit(v, i, b)
		return
	}
	rd.sendAndCheck(v, i, b, false)
}

// sendSplit writes one valid frame in pieces, pausing between them: the worker must
// reassemble it.
func (rd *round) sendSplit(v *victim, i int, b []byte) {
	cuts := []int{1, 3, len(b) / 2, len(b) - 1}
	prev := 0
	for _, c := range cuts {
		if c <= prev || c >= len(b) {
			continue
		}
		if !rd.sendAndCheck(v, i, b[prev:c], true) {
			return
		}
		prev = c
		time.Sleep(2 * time.Millisecond)
	}
	rd.sendAndCheck(v, i, b[prev:], false)
}

// sendAndCheck writes b, lets the model predict, and (unless noWait) waits for every
// predicted reply; it reports whether the victim is still usable.
func (rd *round) sendAndCheck(v *victim, i int, b []byte, noWait bool) bool {
	exps, closeWhy := v.m.feed(b, time.Now())
	v.file.SetWriteDeadline(time.Now().Add(replyBound))
	err := v.sc.SendRaw(b)
	rd.res.envelopes += len(exps)
	if err != nil {
		var se *wire.SendError
		if closeWhy != "" || v.m.closed {
			// The worker may close while a long write (of the very frame that is the
			// violation) is still going.
			rd.awaitClose(v, i, closeWhy)
			return false
		}
		if errors.As(err, &se) && wire.IsTimeout(se.Err) {
			rd.violate(v, "step %d: a %d-byte write blocked for %v", i, len(b), replyBound)
		} else {
			rd.violate(v, "step %d: write failed without a documented violation: %v", i, err)
		}
		v.done = true
		return false
	}
	for k := range exps {
		e := exps[k]
		if e.cancels != 0 {
			for _, t := range v.pending[e.cancels] {
				// A cancelled call ends NOT_STARTED (before dispatch), UNKNOWN (after)
				// or COMPLETED (it won the race) — promptly: the harness waits for it, so
				// the in-flight count stays exact.
				t.codes = append(t.codes, "canceled", okUnknown)
				t.hold = false
			}
		}
		if e.reply {
			ce := e
			v.pending[e.id] = append(v.pending[e.id], &ce)
		} else {
			rd.res.note(e.what, "no reply")
		}
	}
	if closeWhy != "" {
		rd.awaitClose(v, i, closeWhy)
		return false
	}
	if noWait {
		return true
	}
	return rd.awaitSync(v, i)
}

// awaitSync waits until every pending request but the holds has its reply.
func (rd *round) awaitSync(v *victim, i int) bool {
	for {
		waiting := false
		for _, es := range v.pending {
			for _, e := range es {
				if !e.hold {
					waiting = true
				}
			}
		}
		if !waiting {
			return true
		}
		if !rd.recvOne(v, i, false) {
			return false
		}
	}
}

// recvOne receives one reply and judges it. closing says the channel is expected to end.
func (rd *round) recvOne(v *victim, i int, closing bool) bool {
	v.sc.SetReadDeadline(time.Now().Add(replyBound))
	env, err := v.sc.Recv()
	if err != nil {
		if closing && errors.Is(err, wire.ErrClosed) {
			return false
		}
		ids := []uint64{}
		for id := range v.pending {
			ids = append(ids, id)
		}
		rd.violate(v, "step %d: waiting for replies to %v: %v (the model expects the channel open)", i, ids, err)
		v.done = true
		return false
	}
	id := env.GetRequestId()
	e := v.take(env)
	if e == nil {
		rd.violate(v, "step %d: reply for request %d, which expects none: %v", i, id, env)
		v.done = true
		return false
	}
	rd.judge(v, i, e, env, closing)
	return true
}

// take removes and returns the expectation a reply answers: of two awaiting the same id,
// a replay's refusal answers before the call in flight.
func (v *victim) take(env *cuav1.Envelope) *sexpect {
	id := env.GetRequestId()
	es := v.pending[id]
	if len(es) == 0 {
		return nil
	}
	k := 0
	if len(es) > 1 && env.GetToolResult().GetRefusal().GetCode() == "replayed_request" {
		for j, e := range es {
			if slices.Equal(e.codes, []string{"replayed_request"}) {
				k = j
			}
		}
	}
	e := es[k]
	es = slices.Delete(es, k, k+1)
	if len(es) == 0 {
		delete(v.pending, id)
	} else {
		v.pending[id] = es
	}
	if !slices.Equal(e.codes, []string{"replayed_request"}) {
		v.m.ended(id)
	}
	return e
}

func (rd *round) judge(v *victim, i int, e *sexpect, env *cuav1.Envelope, closing bool) {
	if env.GetProtocolVersion() != 1 || !bytes.Equal(env.GetGeneration(), rd.gen) {
		rd.violate(v, "step %d: reply %d carries version %d generation %s", i, e.id, env.GetProtocolVersion(), hex.EncodeToString(env.GetGeneration()))
	}
	if e.list {
		if env.GetToolList() == nil {
			rd.violate(v, "step %d: %s answered with %v, want ToolList", i, e.what, env)
		} else {
			rd.res.note(e.what, "ToolList")
		}
		return
	}
	res := env.GetToolResult()
	if res == nil {
		rd.violate(v, "step %d: %s answered with %v, want ToolResult", i, e.what, env)
		return
	}
	codes := e.codes
	if closing {
		codes = append(slices.Clone(codes), okUnknown, "canceled", "session_ended", "authorization_revoked")
	}
	var got, outcome string
	switch res.GetOutcome() {
	case cuav1.Outcome_OUTCOME_COMPLETED:
		got, outcome = okCompleted, "COMPLETED"
	case cuav1.Outcome_OUTCOME_UNKNOWN:
		got, outcome = okUnknown, "UNKNOWN"
	case cuav1.Outcome_OUTCOME_NOT_STARTED:
		got, outcome = res.GetRefusal().GetCode(), "NOT_STARTED"
		if got == "" {
			got = "(no refusal code)"
		}
		if !res.GetIsError() {
			rd.violate(v, "step %d: NOT_STARTED %s without is_error", i, got)
		}
	default:
		rd.violate(v, "step %d: %s: outcome %v", i, e.what, res.GetOutcome())
		return
	}
	rd.led.record(e.marker, outcome, fmt.Sprintf("victim %s request %d", v.label, e.id))
	obs := outcome
	if outcome == "NOT_STARTED" {
		obs += " " + got
	}
	if !slices.Contains(codes, got) {
		rd.violate(v, "step %d: %s (request %d): got %s, the model allows %q", i, e.what, e.id, obs, codes)
		return
	}
	if outcome == "COMPLETED" && res.GetIsError() && !e.toolError {
		rd.violate(v, "step %d: %s COMPLETED with a tool error: %v", i, e.what, res.GetContent())
	}
	rd.res.note(e.what, obs)
}

// awaitClose: the model says the channel is now closed by a violation. Replies to
// requests still pending may come first; then end-of-file within the bound. Other
// sessions go on (the bystanders check that).
func (rd *round) awaitClose(v *victim, i int, why string) {
	for {
		v.sc.SetReadDeadline(time.Now().Add(replyBound))
		env, err := v.sc.Recv()
		if err != nil {
			if errors.Is(err, wire.ErrClosed) {
				rd.res.note("violation: "+why, "channel closed")
			} else if _, ok := wire.IsViolation(err); ok {
				rd.violate(v, "step %d: the worker wrote garbage before closing: %v", i, err)
			} else {
				rd.violate(v, "step %d: %s must close the channel; after %v it is still open (%v)", i, why, replyBound, err)
			}
			break
		}
		e := v.take(env)
		if e == nil {
			rd.violate(v, "step %d: %s must close the channel; the worker answered request %d instead: %v", i, why, env.GetRequestId(), env.GetToolResult())
			break
		}
		rd.judge(v, i, e, env, true)
	}
	rd.lose(v)
	v.done = true
}

// closeVictim ends a victim from the harness's side: cancel what is in flight, close.
func (rd *round) closeVictim(v *victim, why string) {
	if len(v.pending) > 0 && !v.m.closed {
		rd.step(v, -1, sstep{Op: "cancel-holds"})
	}
	v.sc.Close()
	rd.lose(v)
	v.done = true
	rd.res.note("close: "+why, "closed")
}

// lose records every request without a reply as possibly run.
func (rd *round) lose(v *victim) {
	for id, es := range v.pending {
		for _, e := range es {
			rd.led.record(e.marker, "LOST", fmt.Sprintf("victim %s request %d, no reply", v.label, id))
		}
		delete(v.pending, id)
	}
}

// bystanders call marker steadily on their own sessions while victims are fuzzed; every
// call must complete and write its marker.
func (rd *round) bystanders(ctx context.Context, n int) (wait func()) {
	var wg sync.WaitGroup
	for k := range n {
		s, err := rd.h.CreateSession(ctx, host.SessionSpec{Label: fmt.Sprintf("bystander-%d", k)})
		if err != nil {
			rd.violate(nil, "create bystander: %v", err)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(rd.seed, uint64(k)))
			for c := 0; ctx.Err() == nil; c++ {
				marker := fmt.Sprintf("by%d-%d-%d", rd.seed, k, c)
				args, _ := json.Marshal(map[string]string{"path": rd.markers, "marker": marker})
				cctx, cancel := context.WithTimeout(context.Background(), replyBound)
				res, err := s.Call(cctx, "marker", args)
				cancel()
				rd.led.record(marker, res.Outcome.String(), "bystander")
				rd.logs.mu.Lock()
				rd.res.bystander++
				if res.Outcome != host.Completed {
					rd.res.violations = append(rd.res.violations, fmt.Sprintf("bystander %d call %d: %v %+v (err %v): another session was affected", k, c, res.Outcome, res.Refusal, err))
				}
				rd.logs.mu.Unlock()
				time.Sleep(time.Duration(2+r.IntN(10)) * time.Millisecond)
			}
		}()
	}
	return wg.Wait
}

// logCapture keeps the worker's stderr lines that are not JSON log records (crash output),
// and the host's last records (what a failed start reports).
type logCapture struct {
	mu      sync.Mutex
	lines   []string
	records []slog.Record // the last maxRecords, oldest first
}

// maxRecords bounds logCapture.records.
const maxRecords = 30

func (c *logCapture) Enabled(context.Context, slog.Level) bool { return true }

func (c *logCapture) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "worker stderr" {
		c.mu.Lock()
		c.records = append(c.records, r.Clone())
		if len(c.records) > maxRecords {
			c.records = c.records[len(c.records)-maxRecords:]
		}
		c.mu.Unlock()
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "line" {
			c.mu.Lock()
			c.lines = append(c.lines, a.Value.String())
			c.mu.Unlock()
		}
		return true
	})
	return nil
}

func (c *logCapture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *logCapture) WithGroup(string) slog.Handler      { return c }

func (c *logCapture) crash() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range c.lines {
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "WARNING: DATA RACE") || strings.HasPrefix(l, "goroutine ") {
			return strings.Join(c.lines[max(0, len(c.lines)-40):], "\n")
		}
	}
	return ""
}

// runRound starts a worker, fuzzes victims on it until the deadline or maxVictims, and
// checks the worker, the bystanders and the marker file.
func runRound(ctx context.Context, seed uint64, next func() uint64, maxVictims int, huge bool, tmp string, only *victimSeq) *result {
	res := newResult()
	dir, err := os.MkdirTemp(tmp, "round-")
	if err != nil {
		res.violations = append(res.violations, err.Error())
		return res
	}
	defer os.RemoveAll(dir)
	logs := &logCapture{}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	began := time.Now()
	h, err := host.Start(sctx, host.Options{Logger: slog.New(logs), CloseGrace: 500 * time.Millisecond})
	cancel()
	if err != nil {
		res.violations = append(res.violations, fmt.Sprintf("start host: %v (after %v; load average %s)\n%s", err,
			time.Since(began).Round(time.Millisecond), loadAverage(), logs.report()))
		return res
	}
	gen, _ := hex.DecodeString(h.Generation())
	rd := &round{ctx: ctx, h: h, gen: gen, dir: dir, markers: filepath.Join(dir, "markers"), led: newLedger(), res: res, logs: logs, seed: seed, next: next, huge: huge}
	bctx, stopBystanders := context.WithCancel(ctx)
	wait := rd.bystanders(bctx, 2)
	if only != nil {
		rd.runVictim(only)
	} else {
		for n := 0; n < maxVictims && ctx.Err() == nil; n++ {
			rd.runVictim(generate(seed, next(), huge))
			select {
			case <-h.Exited():
				rd.violate(nil, "the worker exited in the middle of the round")
			default:
			}
			if len(res.violations) > 0 {
				break
			}
		}
	}
	stopBystanders()
	wait()
	select {
	case <-h.Exited():
		rd.violate(nil, "the worker exited before the host closed it")
	default:
	}
	h.Close()
	for _, v := range rd.led.check(rd.markers) {
		rd.violate(nil, "side-effect oracle: %s", v)
	}
	if c := logs.crash(); c != "" {
		rd.violate(nil, "worker stderr shows a crash:\n%s", c)
	}
	return res
}

// report returns the host's last records and the worker's stderr lines, for a violation.
func (c *logCapture) report() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, r := range c.records {
		fmt.Fprintf(&b, "  host: %s %s %s", r.Time.Format("15:04:05.000"), r.Level, r.Message)
		r.Attrs(func(a slog.Attr) bool {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
			return true
		})
		b.WriteString("\n")
	}
	for _, l := range c.lines[max(0, len(c.lines)-maxRecords):] {
		b.WriteString("  worker stderr: " + l + "\n")
	}
	return b.String()
}

// loadAverage returns the first three fields of /proc/loadavg, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
