package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
)

// Options configures Run.
type Options struct {
	// Host starts the worker that replays (display, policy, ceiling…), as for host.Start.
	Host host.Options
	// StepTimeout bounds each call; zero means 60 s.
	StepTimeout time.Duration
	// MaxWait bounds the pause kept before a step (the original run's time between the
	// previous call's end and this call's begin); zero means no pause.
	MaxWait time.Duration
	// Hold keeps the worker, and the applications the replay launched, this long after
	// the last step before they are closed: the last step's effect (a command a terminal
	// runs after its Return) may still be under way when the call returns.
	Hold time.Duration
	// OnStep, when set, is told each step as it ends.
	OnStep func(Step)
}

// Step statuses.
const (
	// StatusCompleted: the step ran and completed without error.
	StatusCompleted = "completed"
	// StatusSkipped: the original call did not complete, so the replay did not run it.
	StatusSkipped = "skipped"
	// StatusTargetNotFound: the step's process or window has no counterpart in the
	// replay; the replay stops.
	StatusTargetNotFound = "target_not_found"
	// StatusRefused: the replay's worker refused the call; the replay stops.
	StatusRefused = "refused"
	// StatusFailed: the call ran and failed, or its outcome is unknown; the replay stops.
	StatusFailed = "failed"
)

// Step is what happened to one step.
type Step struct {
	N       int    `json:"step"`
	Segment string `json:"segment"`
	Record  uint64 `json:"record"`
	Session string `json:"session"`
	Tool    string `json:"tool"`
	Status  string `json:"status"`
	// Detail says why a step was skipped, stopped, or what it mapped and did.
	Detail string `json:"detail,omitempty"`
	// Arguments are the arguments the replay sent (targets mapped); absent for a step
	// that did not run.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Code is the refusal or error code of a step that stopped the replay.
	Code       string  `json:"code,omitempty"`
	DurationMS float64 `json:"duration_ms,omitempty"`
}

// Report is what a replay did, step by step.
type Report struct {
	Dir   string `json:"dir"`
	Steps []Step `json:"steps"`
	// Ran counts the steps run, Completed those that completed.
	Ran       int `json:"ran"`
	Completed int `json:"completed"`
	// Stopped is the step that stopped the replay (0: it ran to the end).
	Stopped int `json:"stopped,omitempty"`
}

// OK reports whether every step that should run ran and completed.
func (r *Report) OK() bool { return r.Stopped == 0 }

// targets maps one segment's processes and windows to the replay's.
type targets struct {
	pids map[int]int
	wins map[uint32]uint32
	// unclaimed holds launches whose original process is not known (a journal without
	// launch facts): the first unknown pid a later step names claims the latest.
	unclaimed []int
	// newWins lists the replay's windows per replay pid, in launch order, and how many of
	// them are already mapped.
	newWins map[int][]uint32
}

// Run starts a worker with opts.Host and replays p on it. It returns the report and a
// non-nil error only when the replay could not be carried out at all (the worker did not
// start); a step that stops the replay is in the report.
func Run(ctx context.Context, p *Plan, opts Options) (*Report, error) {
	if opts.StepTimeout <= 0 {
		opts.StepTimeout = 60 * time.Second
	}
	log := opts.Host.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h, err := host.Start(ctx, opts.Host)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer h.Close()
	rep := &Report{Dir: p.Dir, Steps: []Step{}}
	sessions := map[*SessionPlan]*host.Session{}
	maps := map[string]*targets{}
	emit := func(s Step) {
		rep.Steps = append(rep.Steps, s)
		if opts.OnStep != nil {
			opts.OnStep(s)
		}
	}
	for _, sp := range p.Steps {
		st := Step{N: sp.N, Segment: sp.Segment, Record: sp.Record, Session: sp.Session.Label, Tool: sp.Tool}
		if rep.Stopped != 0 {
			break
		}
		if sp.Skip != "" {
			st.Status, st.Detail = StatusSkipped, sp.Skip
			emit(st)
			continue
		}
		tm := maps[sp.Segment]
		if tm == nil {
			tm = &targets{pids: map[int]int{}, wins: map[uint32]uint32{}, newWins: map[int][]uint32{}}
			maps[sp.Segment] = tm
		}
		sess := sessions[sp.Session]
		if sess == nil {
			if sess, err = startSession(ctx, h, sp.Session, len(sessions)+1); err != nil {
				st.Status, st.Detail, st.Code = StatusRefused, err.Error(), codeOf(err)
				rep.Stopped = sp.N
				emit(st)
				break
			}
			sessions[sp.Session] = sess
		}
		args, detail, ok := tm.mapArguments(ctx, sess, sp)
		if !ok {
			st.Status, st.Detail = StatusTargetNotFound, detail
			rep.Stopped = sp.N
			emit(st)
			break
		}
		st.Arguments, st.Detail = args, detail
		if opts.MaxWait > 0 && sp.Gap > 0 {
			select {
			case <-time.After(min(sp.Gap, opts.MaxWait)):
			case <-ctx.Done():
			}
		}
		cctx, cancel := context.WithTimeout(ctx, opts.StepTimeout)
		t0 := time.Now()
		res, err := sess.Call(cctx, sp.Tool, args)
		cancel()
		st.DurationMS = float64(time.Since(t0).Microseconds()) / 1e3
		rep.Ran++
		switch {
		case err != nil:
			st.Status, st.Detail = StatusFailed, err.Error()
		case res.Refusal != nil:
			st.Status, st.Code = StatusRefused, res.Refusal.Code
			st.Detail = res.Refusal.Message
			if res.Refusal.Code == string(authz.CodeWindowNotFound) || res.Refusal.Code == string(authz.CodeStaleElement) {
				st.Status = StatusTargetNotFound
			}
		case res.Outcome != host.Completed:
			st.Status, st.Detail = StatusFailed, "outcome "+res.Outcome.String()
		case res.IsError:
			st.Status, st.Detail = StatusFailed, "the tool reported an error: "+firstText(res)
			var f struct {
				ErrorCode string `json:"error_code"`
			}
			if json.Unmarshal(res.Structured, &f) == nil {
				st.Code = f.ErrorCode
			}
		default:
			st.Status = StatusCompleted
			rep.Completed++
			if sp.Tool == "launch_app" {
				st.Detail = appendDetail(st.Detail, tm.launched(sp, res.Structured))
			}
		}
		if st.Status != StatusCompleted {
			rep.Stopped = sp.N
		}
		emit(st)
	}
	if opts.Hold > 0 && rep.Ran > 0 {
		select {
		case <-time.After(opts.Hold):
		case <-ctx.Done():
		}
	}
	for _, s := range sessions {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if err := s.Revoke(rctx); err != nil {
			log.Debug("replay: revoke session", "err", err)
		}
		cancel()
	}
	return rep, nil
}

// startSession creates the replay's counterpart of a journal session: the same mode and
// manifest under a label of its own.
func startSession(ctx context.Context, h *host.Host, sp *SessionPlan, n int) (*host.Session, error) {
	mode, err := authz.ParseMode(sp.Mode)
	if err != nil {
		return nil, fmt.Errorf("session %s: mode %q: %w", sp.Label, sp.Mode, err)
	}
	s, err := h.CreateSession(ctx, host.SessionSpec{Label: "replay-" + strconv.Itoa(n), Mode: mode, Manifest: sp.Manifest})
	if err != nil {
		return nil, fmt.Errorf("recreate session %s (%s): %w", sp.Label, sp.Mode, err)
	}
	return s, nil
}

func codeOf(err error) string {
	var re *host.RequestError
	if errors.As(err, &re) {
		return re.Code
	}
	return ""
}

// mapArguments replaces the original run's pid and window_id with the replay's.
func (tm *targets) mapArguments(ctx context.Context, sess *host.Session, sp *StepPlan) (json.RawMessage, string, bool) {
	var args map[string]any
	if err := json.Unmarshal(sp.Arguments, &args); err != nil {
		return nil, "arguments: " + err.Error(), false
	}
	var detail string
	if v, ok := args["pid"].(float64); ok && sp.Tool != "launch_app" {
		orig := int(v)
		np, ok := tm.pids[orig]
		if !ok && len(tm.unclaimed) > 0 {
			np = tm.unclaimed[len(tm.unclaimed)-1]
			tm.unclaimed = tm.unclaimed[:len(tm.unclaimed)-1]
			tm.pids[orig], ok = np, true
		}
		if !ok {
			return nil, fmt.Sprintf("pid %d of the original run has no counterpart: no launch_app of the replay started it", orig), false
		}
		args["pid"] = np
		detail = appendDetail(detail, fmt.Sprintf("pid %d→%d", orig, np))
	}
	if v, ok := args["window_id"].(float64); ok {
		orig := uint32(v)
		nw, ok := tm.wins[orig]
		if !ok {
			nw, ok = tm.claimWindow(ctx, sess, args)
			if ok {
				tm.wins[orig] = nw
			}
		}
		if !ok {
			return nil, fmt.Sprintf("window %d of the original run has no counterpart in the replay", orig), false
		}
		args["window_id"] = nw
		detail = appendDetail(detail, fmt.Sprintf("window %d→%d", orig, nw))
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, "arguments: " + err.Error(), false
	}
	return b, detail, true
}

// claimWindow finds an unmapped window of the (mapped) pid: the next one the launch
// reported, else the first one list_windows shows that no step has claimed.
func (tm *targets) claimWindow(ctx context.Context, sess *host.Session, args map[string]any) (uint32, bool) {
	pid, ok := args["pid"].(int)
	if !ok {
		return 0, false
	}
	taken := map[uint32]bool{}
	for _, w := range tm.wins {
		taken[w] = true
	}
	for _, w := range tm.newWins[pid] {
		if !taken[w] {
			return w, true
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := sess.Call(cctx, "list_windows", json.RawMessage(`{}`))
	if err != nil || res.Outcome != host.Completed || res.IsError {
		return 0, false
	}
	var l struct {
		Windows []struct {
			ID  uint32 `json:"window_id"`
			PID int    `json:"pid"`
		} `json:"windows"`
	}
	if json.Unmarshal(res.Structured, &l) != nil {
		return 0, false
	}
	for _, w := range l.Windows {
		if w.PID == pid && !taken[w.ID] {
			return w.ID, true
		}
	}
	return 0, false
}

// launched records what a replayed launch_app started as the counterpart of what the
// original one did: the process, and its windows in order, or by title where the orders
// differ.
func (tm *targets) launched(sp *StepPlan, structured json.RawMessage) string {
	var now Launched
	if json.Unmarshal(structured, &now) != nil || now.PID <= 0 {
		return "the launch reported no process"
	}
	tm.newWins[now.PID] = now.WindowIDs
	orig := sp.Launched
	if orig == nil {
		tm.unclaimed = append(tm.unclaimed, now.PID)
		return fmt.Sprintf("launched pid %d (the journal does not say which pid the original launch had)", now.PID)
	}
	tm.pids[orig.PID] = now.PID
	detail := fmt.Sprintf("launched pid %d for %d", now.PID, orig.PID)
	used := map[uint32]bool{}
	title := func(ws []struct {
		ID    uint32 `json:"window_id"`
		Title string `json:"title"`
	}, id uint32) string {
		for _, w := range ws {
			if w.ID == id {
				return w.Title
			}
		}
		return ""
	}
	for i, ow := range orig.WindowIDs {
		var nw uint32
		// The window with the same title, else the one in the same place in the order.
		if t := title(orig.Windows, ow); t != "" {
			for _, w := range now.Windows {
				if w.Title == t && !used[w.ID] {
					nw = w.ID
					break
				}
			}
		}
		if nw == 0 && i < len(now.WindowIDs) && !used[now.WindowIDs[i]] {
			nw = now.WindowIDs[i]
		}
		if nw != 0 {
			used[nw] = true
			tm.wins[ow] = nw
			detail += fmt.Sprintf(", window %d for %d", nw, ow)
		}
	}
	return detail
}

func appendDetail(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "; " + b
}

func firstText(r host.Result) string {
	for _, c := range r.Content {
		if c.Text != "" {
			return c.Text
		}
	}
	return ""
}
