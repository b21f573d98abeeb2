package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/host/hosttest"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
)

// bounds are how long the harness waits for anything; nothing it does blocks longer.
type bounds struct {
	reply time.Duration // a control reply or a session reply
	exit  time.Duration // the worker's exit after teardown
	fd    time.Duration // a refused descriptor reaching end-of-file
	send  time.Duration // one datagram or envelope leaving
}

var defaultBounds = bounds{reply: 3 * time.Second, exit: 5 * time.Second, fd: 2 * time.Second, send: 3 * time.Second}

// outcome is what one sequence produced.
type outcome struct {
	frames     int
	calls      int
	reactions  map[string]int
	known      map[string]int
	violations []string
}

func (o *outcome) violate(format string, args ...any) {
	o.violations = append(o.violations, fmt.Sprintf(format, args...))
}

// sessChan is one session channel the harness attached to a CreateSession.
type sessChan struct {
	conn   *wire.SessionConn
	file   *os.File // the descriptor conn owns, for write deadlines
	step   int
	nextID uint64
	// ms is the model's session once the worker confirmed it; nil otherwise.
	ms *msess
	// eof is set once a read saw the channel end.
	eof bool
}

// probe is the read end of a pipe whose write end went to the worker.
type probe struct {
	r    *os.File
	step int
}

// pending is a sent frame whose reaction has not been checked yet.
type pending struct {
	step   int
	phase  phase
	exp    expect
	callID uint64
	sent   time.Time
	// sess is the session channel attached to a CreateSession, if any.
	sess *sessChan
	// idle is the requested idle TTL of a CreateSession; ttl its TTL.
	idle, ttl time.Duration
	probes    []*probe
}

// runner executes one sequence against one fresh worker.
type runner struct {
	seq     *sequence
	b       bounds
	strict  bool
	w       *hosttest.RawWorker
	m       *model
	out     *outcome
	dir     string
	markers string
	// written lists the markers whose calls came back COMPLETED.
	written  []string
	sessions []*sessChan
	probes   []*probe
	pend     []*pending
	// dead is set when the worker is gone for a reason the model predicted.
	dead bool
	// broken stops the sequence after a violation that leaves nothing to compare.
	broken bool
}

type execOptions struct {
	bounds bounds
	strict bool
	tmp    string
	logger *slog.Logger
}

// execute runs seq on a new worker and checks every reaction.
func execute(ctx context.Context, seq *sequence, opts execOptions) *outcome {
	out := &outcome{reactions: map[string]int{}, known: map[string]int{}}
	dir, err := os.MkdirTemp(opts.tmp, "seq-")
	if err != nil {
		out.violate("harness: temp dir: %v", err)
		return out
	}
	defer os.RemoveAll(dir)
	w, err := hosttest.SpawnRaw(ctx, host.Options{Logger: opts.logger, WorkerLogLevel: slog.LevelDebug, CloseGrace: 200 * time.Millisecond})
	if err != nil {
		out.violate("harness: spawn: %v", err)
		return out
	}
	r := &runner{seq: seq, b: opts.bounds, strict: opts.strict, w: w, m: newModel(), out: out, dir: dir, markers: filepath.Join(dir, "markers")}
	defer r.cleanup()
	if granted, err := w.ForceSendBuffer(4 << 20); err != nil || granted < wire.MaxControlFrame+64<<10 {
		r.noteReaction("harness", "send buffer", fmt.Sprintf("only %d bytes: oversized frames stay local", granted))
	}
	for i, st := range seq.Steps {
		if r.broken || ctx.Err() != nil {
			break
		}
		switch st.Op {
		case opSend:
			r.send(i, st)
		case opEOF:
			r.eof(i, st)
		case opCall:
			r.drain()
			r.call(i, st)
		}
	}
	if !r.broken {
		r.finish()
	}
	return out
}

func (r *runner) cleanup() {
	r.w.Close()
	for _, s := range r.sessions {
		s.conn.Close()
	}
	for _, p := range r.probes {
		p.r.Close()
	}
}

func (r *runner) noteReaction(ph, what, observed string) {
	r.out.reactions[fmt.Sprintf("%-10s %-44s → %s", ph, what, observed)]++
}

// attach creates the descriptors of one step; the returned closers release the harness's
// copies of what went to the worker.
func (r *runner) attach(i int, kinds []string) (fds []int, give []*os.File, sc *sessChan, probes []*probe, err error) {
	for _, k := range kinds {
		var f *os.File
		switch k {
		case fdSession:
			mine, theirs, e := wire.SessionPair()
			if e != nil {
				return nil, give, nil, probes, e
			}
			conn, e := wire.NewSessionConn(mine)
			if e != nil {
				theirs.Close()
				return nil, give, nil, probes, e
			}
			s := &sessChan{conn: conn, file: mine, step: i}
			r.sessions = append(r.sessions, s)
			if sc == nil {
				sc = s
			}
			f = theirs
		case fdProbe:
			pr, pw, e := os.Pipe()
			if e != nil {
				return nil, give, nil, probes, e
			}
			p := &probe{r: pr, step: i}
			r.probes = append(r.probes, p)
			probes = append(probes, p)
			f = pw
		case fdSeqpacket:
			a, b, e := wire.ControlPair()
			if e != nil {
				return nil, give, nil, probes, e
			}
			p := &probe{r: a, step: i}
			r.probes = append(r.probes, p)
			probes = append(probes, p)
			f = b
		case fdDevNull:
			dn, e := os.Open(os.DevNull)
			if e != nil {
				return nil, give, nil, probes, e
			}
			f = dn
		}
		give = append(give, f)
		n, e := rawFD(f)
		if e != nil {
			return nil, give, nil, probes, e
		}
		fds = append(fds, n)
	}
	return fds, give, sc, probes, nil
}

func rawFD(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	err = rc.Control(func(x uintptr) { fd = int(x) })
	return fd, err
}

func (r *runner) send(i int, st step) {
	if r.m.phase == stopped {
		return
	}
	fds, give, sc, probes, err := r.attach(i, st.FDs)
	release := func() {
		for _, f := range give {
			f.Close()
		}
		give = nil
	}
	defer release()
	if err != nil {
		r.out.violate("harness: step %d: descriptors: %v", i, err)
		r.broken = true
		return
	}
	ph := r.m.phase
	r.w.SetWriteDeadline(time.Now().Add(r.b.send))
	sent := time.Now()
	err = r.w.Control.SendRaw(st.Frame, fds...)
	release() // the kernel holds the in-flight copies now; the worker's are its own
	if err != nil {
		switch {
		case errors.Is(err, wire.ErrClosed):
			r.out.violate("step %d (%s): the worker closed the control channel before this frame (model phase %s); stderr tail:\n%s", i, st.Desc, ph, tail(r.w.Stderr()))
			r.broken = true
		case wire.IsTimeout(err):
			r.out.violate("step %d (%s): sending a %d-byte datagram blocked for %v", i, st.Desc, len(st.Frame), r.b.send)
			r.broken = true
		default: // refused locally (EMSGSIZE): nothing reached the worker
			r.noteReaction(ph.String(), st.Desc, "not sent: "+shortErr(err))
		}
		return
	}
	r.out.frames++
	streamFD := len(st.FDs) == 1 && st.FDs[0] == fdSession
	exp := r.m.frame(st.Frame, len(st.FDs), streamFD, sent)
	p := &pending{step: i, phase: ph, exp: exp, sent: sent, sess: sc, probes: probes}
	if f, bad := decodeStrict(st.Frame, len(st.FDs)); bad == "" {
		p.callID = f.GetCallId()
		if c := f.GetCreateSession(); c != nil {
			p.ttl = time.Duration(c.GetTtlSeconds()) * time.Second
			p.idle = time.Duration(c.GetIdleTtlSeconds()) * time.Second
		}
	}
	if exp.reply == replyCreated {
		// Registered now so that pipelined frames see it; confirmed by the reply.
		r.m.sessions[exp.label] = &msess{label: exp.label, bounded: exp.bounded, expiresAt: sent.Add(p.ttl), idle: p.idle, activeLo: sent, activeHi: sent}
	}
	if exp.reply == replyRevoked {
		for _, l := range exp.labels {
			r.m.sessions[l].revoked = true
		}
	}
	r.pend = append(r.pend, p)
	if !st.NoWait || exp.known != "" || exp.teardown {
		r.drain()
	}
}

// drain checks the reaction to every pending frame, in order.
func (r *runner) drain() {
	for len(r.pend) > 0 && !r.broken {
		p := r.pend[0]
		r.pend = r.pend[1:]
		r.check(p)
	}
}

func (r *runner) recvControl(d time.Duration) (*cuav1.ControlFrame, error) {
	r.w.SetReadDeadline(time.Now().Add(d))
	f, fd, err := r.w.Control.Recv()
	if fd != nil {
		fd.Close()
		return f, fmt.Errorf("the worker sent a descriptor with %s", wire.KindOf(f))
	}
	return f, err
}

func (r *runner) check(p *pending) {
	exp := p.exp
	ph := p.phase.String()
	if exp.teardown {
		r.checkTeardown(p)
		return
	}
	if exp.reply == replyNone {
		r.noteReaction(ph, exp.what, "no reply")
		return
	}
	if exp.alt != nil && exp.alt.reply == replyNone {
		// The documented reply may be lost (a known deviation): no reply within the
		// bound is that deviation; anything else is judged as usual.
		f, err := r.recvControl(r.b.reply)
		if wire.IsTimeout(err) {
			r.known(exp.known, ph, exp.what, "no reply")
			r.checkFDs(p, false)
			return
		}
		r.judge(p, f, err)
		return
	}
	f, err := r.recvControl(r.b.reply)
	r.judge(p, f, err)
}

// judge compares one received reply (or error) with a pending frame's expectation.
func (r *runner) judge(p *pending, f *cuav1.ControlFrame, err error) {
	exp := p.exp
	ph := p.phase.String()
	if err != nil {
		r.out.violate("step %d (%s, %s): expected %s, got %v (exit %s); stderr tail:\n%s", p.step, ph, exp.what, describe(exp), err, r.exitString(), tail(r.w.Stderr()))
		r.broken = true
		return
	}
	got := time.Now()
	observed := describeFrame(f)
	switch {
	case r.matches(f, exp, p, got):
		r.noteReaction(ph, exp.what, observed)
		r.applyReply(f, p, got)
	case exp.alt != nil && r.matches(f, *exp.alt, p, got):
		r.known(exp.known, ph, exp.what, observed)
		if c := f.GetSessionCreated(); c != nil {
			r.m.sessions[c.GetLabel()] = &msess{label: c.GetLabel(), bounded: exp.alt.bounded, idle: p.idle}
		}
		r.applyReply(f, p, got)
	default:
		r.out.violate("step %d (%s, %s): expected %s (call_id %d), got %s", p.step, ph, exp.what, describe(exp), p.callID, detailFrame(f))
		r.broken = true
		return
	}
	r.checkFDs(p, f.GetSessionCreated() != nil)
}

func (r *runner) known(id, ph, what, observed string) {
	if r.strict {
		r.out.violate("known deviation %s (%s, %s): %s", id, ph, what, observed)
		return
	}
	r.out.known[id]++
	r.noteReaction(ph, what, observed+" [known: "+id+"]")
}

// matches compares a reply with an expectation.
func (r *runner) matches(f *cuav1.ControlFrame, exp expect, p *pending, got time.Time) bool {
	if f.GetProtocolVersion() != 1 {
		return false
	}
	switch exp.reply {
	case replyReady:
		rd := f.GetReady()
		return rd != nil && f.GetCallId() == 0 && rd.GetVersion() == 1 && int(rd.GetPid()) == r.w.PID()
	case replyCreated:
		c := f.GetSessionCreated()
		if c == nil || f.GetCallId() != p.callID || c.GetLabel() != exp.label {
			return false
		}
		at := time.UnixMilli(c.GetExpiresAtUnixMs())
		return !at.Before(p.sent.Add(p.ttl).Add(-time.Second)) && !at.After(got.Add(p.ttl).Add(time.Second))
	case replyRevoked:
		rv := f.GetRevoked()
		if rv == nil || f.GetCallId() != p.callID {
			return false
		}
		a, b := slices.Clone(rv.GetLabels()), slices.Clone(exp.labels)
		slices.Sort(a)
		slices.Sort(b)
		return slices.Equal(a, b)
	case replyError:
		e := f.GetError()
		return e != nil && f.GetCallId() == p.callID && e.GetCode() == exp.code
	case replyStatus:
		st := f.GetWorkerStatus()
		if st == nil || f.GetCallId() != p.callID || st.GetInFlightCalls() != 0 || st.GetTruncated() {
			return false
		}
		listed := map[string]bool{}
		for _, s := range st.GetSessions() {
			l := s.GetLabel()
			if listed[l] || s.GetInFlightCalls() != 0 || s.GetAwaitingConsent() != 0 || len(s.GetCalls()) != 0 ||
				!(slices.Contains(exp.labels, l) || slices.Contains(exp.maybe, l)) {
				return false
			}
			listed[l] = true
		}
		for _, l := range exp.labels {
			if !listed[l] {
				return false
			}
		}
		return true
	}
	return false
}

func (r *runner) applyReply(f *cuav1.ControlFrame, p *pending, got time.Time) {
	if c := f.GetSessionCreated(); c != nil {
		ms := r.m.sessions[c.GetLabel()]
		if ms != nil {
			ms.expiresAt = time.UnixMilli(c.GetExpiresAtUnixMs())
			ms.activeLo, ms.activeHi = p.sent, got
		}
		if p.sess != nil {
			p.sess.ms = ms
		}
	}
}

// checkFDs: every descriptor of a frame the worker did not keep must be closed in the
// worker — probes and refused session channels read end-of-file within the bound, while
// the worker may well still be running.
func (r *runner) checkFDs(p *pending, sessionKept bool) {
	for _, pr := range p.probes {
		if !r.probeEOF(pr) {
			r.out.violate("step %d (%s): the worker still holds a descriptor of the refused frame %v later (pid %d alive: %t)", p.step, p.exp.what, r.b.fd, r.w.PID(), !r.exited())
		}
	}
	if p.sess != nil && !sessionKept {
		if !r.sessionEOF(p.sess) {
			r.out.violate("step %d (%s): the worker still holds the session channel of a refused CreateSession %v later", p.step, p.exp.what, r.b.fd)
		}
	}
}

func (r *runner) probeEOF(p *probe) bool {
	p.r.SetReadDeadline(time.Now().Add(r.b.fd))
	var buf [64]byte
	for {
		n, err := p.r.Read(buf[:])
		if n > 0 {
			continue
		}
		return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
	}
}

func (r *runner) sessionEOF(s *sessChan) bool {
	if s.eof {
		return true
	}
	s.conn.SetReadDeadline(time.Now().Add(r.b.fd))
	_, err := s.conn.Recv()
	if errors.Is(err, wire.ErrClosed) {
		s.eof = true
		return true
	}
	return false
}

func (r *runner) exited() bool {
	select {
	case <-r.w.Exited():
		return true
	default:
		return false
	}
}

func (r *runner) exitString() string {
	if code, ok := r.w.ExitCode(); ok {
		if sig, ok := r.w.Signal(); ok {
			return "signal " + sig.String()
		}
		return fmt.Sprint(code)
	}
	return "running"
}

// checkTeardown: an Error frame (required when the model says so, else optional), then
// end-of-file, then the predicted exit status, and every session channel closed.
func (r *runner) checkTeardown(p *pending) {
	exp := p.exp
	ph := p.phase.String()
	observed := []string{}
	sawError := false
	for {
		f, err := r.recvControl(r.b.reply)
		if err != nil {
			if errors.Is(err, wire.ErrClosed) {
				observed = append(observed, "EOF")
				break
			}
			r.out.violate("step %d (%s, %s): expected teardown, channel still open after %v: %v", p.step, ph, exp.what, r.b.reply, err)
			r.broken = true
			return
		}
		observed = append(observed, describeFrame(f))
		e := f.GetError()
		if e == nil || sawError || f.GetCallId() != 0 || exp.reply != replyError || e.GetCode() != exp.code {
			r.out.violate("step %d (%s, %s): expected %s, got %s", p.step, ph, exp.what, describe(exp), describeFrame(f))
			r.broken = true
			return
		}
		sawError = true
	}
	// A refused Hello's Error is required (unsupported_protocol_version, invalid_request
	// exit 1); a violation's is best effort.
	if exp.exit == 1 && exp.reply == replyError && !sawError {
		r.out.violate("step %d (%s, %s): expected Error %s before end-of-file, got none", p.step, ph, exp.what, exp.code)
	}
	r.awaitExit(p.step, ph, exp, strings.Join(observed, ", "))
	for _, pr := range p.probes {
		if !r.probeEOF(pr) {
			r.out.violate("step %d (%s): a descriptor of the refused frame is still open after the worker's exit", p.step, exp.what)
		}
	}
}

func (r *runner) awaitExit(step int, ph string, exp expect, observed string) {
	t := time.NewTimer(r.b.exit)
	defer t.Stop()
	select {
	case <-r.w.Exited():
	case <-t.C:
		r.out.violate("step %d (%s, %s): worker still running %v after teardown", step, ph, exp.what, r.b.exit)
		r.w.Kill()
		<-r.w.Exited()
		r.broken = true
		return
	}
	r.dead = true
	code, _ := r.w.ExitCode()
	if sig, ok := r.w.Signal(); ok {
		r.out.violate("step %d (%s, %s): worker died of %v; stderr tail:\n%s", step, ph, exp.what, sig, tail(r.w.WaitStderr(time.Second)))
		return
	}
	obs := fmt.Sprintf("%s; exit %d", observed, code)
	switch {
	case code == exp.exit:
		r.noteReaction(ph, exp.what, obs)
	case exp.alt != nil && code == exp.alt.exit:
		r.known(exp.known, ph, exp.what, obs)
	default:
		r.out.violate("step %d (%s, %s): exit status %d, want %d (%s)", step, ph, exp.what, code, exp.exit, observed)
	}
}

// eof closes the control channel: the worker revokes everything and exits 0.
func (r *runner) eof(i int, st step) {
	r.drain()
	if r.m.phase == stopped || r.broken {
		return
	}
	ph := r.m.phase.String()
	exp := r.m.eof(st.Desc)
	r.w.Control.Close()
	r.awaitExit(i, ph, exp, "EOF")
}

// call makes one marker call on a session channel and checks it against the model and,
// at the end, against the marker file.
func (r *runner) call(i int, st step) {
	if len(r.sessions) == 0 {
		return
	}
	s := r.sessions[st.Session%len(r.sessions)]
	marker := fmt.Sprintf("m%d-%d", i, st.Session)
	sent := time.Now()
	v := r.m.call(s.ms, sent)
	if s.eof {
		v = callVerdict{}
	}
	s.nextID++
	args, _ := json.Marshal(map[string]string{"path": r.markers, "marker": marker})
	env := &cuav1.Envelope{ProtocolVersion: 1, RequestId: s.nextID, Generation: r.m.generation,
		Body: &cuav1.Envelope_CallTool{CallTool: &cuav1.CallTool{Name: "marker", Arguments: args}}}
	r.out.calls++
	s.file.SetWriteDeadline(time.Now().Add(r.b.send))
	serr := s.conn.Send(env)
	var reply *cuav1.Envelope
	var rerr error
	if serr == nil || v.reply {
		s.conn.SetReadDeadline(time.Now().Add(r.b.reply))
		reply, rerr = s.conn.Recv()
	}
	got := time.Now()
	what := "marker call, no session"
	if s.ms != nil {
		what = "marker call"
	}
	ph := r.m.phase.String()
	if !v.reply {
		switch {
		case reply != nil:
			r.out.violate("step %d: a marker call on a channel the worker must not serve was answered: %v", i, reply.GetToolResult())
		case rerr != nil && wire.IsTimeout(rerr):
			r.out.violate("step %d: the worker still holds a session channel it never bound (or should have closed): no end-of-file within %v", i, r.b.reply)
		default:
			s.eof = true
			r.noteReaction(ph, what, "channel closed")
		}
		return
	}
	if serr != nil || rerr != nil {
		r.out.violate("step %d: marker call on live session %q: send %v, recv %v", i, s.ms.label, serr, rerr)
		r.broken = true
		return
	}
	res := reply.GetToolResult()
	if reply.GetRequestId() != s.nextID || res == nil {
		r.out.violate("step %d: marker call %d answered with %v", i, s.nextID, reply)
		return
	}
	code := res.GetRefusal().GetCode()
	switch res.GetOutcome() {
	case cuav1.Outcome_OUTCOME_COMPLETED:
		if res.GetIsError() || !slices.Contains(v.codes, "") {
			r.out.violate("step %d: marker call on %q COMPLETED (is_error %t), model allows only %q", i, s.ms.label, res.GetIsError(), v.codes)
		}
		r.written = append(r.written, marker)
		r.noteReaction(ph, what, "COMPLETED")
		code = ""
	case cuav1.Outcome_OUTCOME_NOT_STARTED:
		if code == "" || !slices.Contains(v.codes, code) {
			r.out.violate("step %d: marker call on %q NOT_STARTED %q, model allows %q", i, s.ms.label, code, v.codes)
		}
		r.noteReaction(ph, what, "NOT_STARTED "+code)
	default:
		r.out.violate("step %d: marker call on %q: outcome %v (%v)", i, s.ms.label, res.GetOutcome(), res)
	}
	r.m.callResult(s.ms, code, sent, got)
}

// finish ends the sequence: end-of-file if the worker still runs, then every channel
// closed, every probe at end-of-file, the marker file exactly the completed calls, and no
// panic on stderr.
func (r *runner) finish() {
	r.drain()
	if r.broken {
		return
	}
	if !r.dead && !r.exited() {
		r.eof(len(r.seq.Steps), step{Desc: "final EOF"})
	}
	if !r.exited() {
		r.w.Kill()
		<-r.w.Exited()
	}
	for _, s := range r.sessions {
		if !r.sessionEOF(s) {
			r.out.violate("session channel of step %d still open after the worker exited", s.step)
		}
	}
	for _, p := range r.probes {
		if !r.probeEOF(p) {
			r.out.violate("descriptor of step %d still open after the worker exited", p.step)
		}
	}
	got := readMarkers(r.markers)
	want := slices.Clone(r.written)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		r.out.violate("marker file holds %q, completed calls were %q", got, want)
	}
	if p := panicLines(r.w.WaitStderr(2 * time.Second)); p != "" {
		r.out.violate("worker stderr shows a crash:\n%s", p)
	}
}

func readMarkers(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return []string{}
	}
	out := []string{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// panicLines returns the non-JSON stderr lines that look like a Go crash (panic, fatal
// error, data race, goroutine dump), or "".
func panicLines(stderr string) string {
	var hits []string
	sc := bufio.NewScanner(strings.NewReader(stderr))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "{") {
			continue
		}
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "WARNING: DATA RACE") ||
			strings.HasPrefix(l, "goroutine ") || strings.HasPrefix(l, "SIGSEGV") || strings.HasPrefix(l, "runtime:") {
			hits = append(hits, l)
		}
	}
	if len(hits) == 0 {
		return ""
	}
	return tail(stderr)
}

func tail(s string) string {
	const n = 3000
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func shortErr(err error) string {
	if errors.Is(err, unix.EMSGSIZE) {
		return "EMSGSIZE"
	}
	s := err.Error()
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

func describe(e expect) string {
	s := ""
	switch e.reply {
	case replyNone:
		s = "no reply"
	case replyReady:
		s = "Ready"
	case replyCreated:
		s = "SessionCreated " + e.label
	case replyRevoked:
		s = fmt.Sprintf("Revoked %q", e.labels)
	case replyError:
		s = "Error " + e.code
	case replyStatus:
		s = fmt.Sprintf("WorkerStatus %q (maybe %q), nothing in flight", e.labels, e.maybe)
	}
	if e.teardown {
		s += fmt.Sprintf(", teardown, exit %d", e.exit)
	}
	if e.alt != nil {
		s += " (known deviation " + e.known + ": " + describe(*e.alt) + ")"
	}
	return s
}

func describeFrame(f *cuav1.ControlFrame) string {
	switch b := f.GetBody().(type) {
	case *cuav1.ControlFrame_Error:
		return "Error " + b.Error.GetCode()
	case *cuav1.ControlFrame_Revoked:
		return fmt.Sprintf("Revoked(%d)", len(b.Revoked.GetLabels()))
	case *cuav1.ControlFrame_WorkerStatus:
		return fmt.Sprintf("WorkerStatus(%d)", len(b.WorkerStatus.GetSessions()))
	}
	return wire.KindOf(f)
}

// detailFrame prints a frame in full for a violation report.
func detailFrame(f *cuav1.ControlFrame) string {
	b, _ := protojson.Marshal(f)
	return string(b)
}
