package worker

import (
	"context"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// countingDesktop counts the desktop round trips the pipeline and the handler make.
type countingDesktop struct {
	*fakeDesktop
	window, windows, pointer atomic.Int64
}

func (d *countingDesktop) Window(ctx context.Context, id uint32) (x11.Window, error) {
	d.window.Add(1)
	return d.fakeDesktop.Window(ctx, id)
}

func (d *countingDesktop) Windows(ctx context.Context) ([]x11.Window, error) {
	d.windows.Add(1)
	return d.fakeDesktop.Windows(ctx)
}

func (d *countingDesktop) Pointer(ctx context.Context) (x11.Point, error) {
	d.pointer.Add(1)
	return d.fakeDesktop.Pointer(ctx)
}

// callWork is what one call cost, from the channel to the handler's return.
type callWork struct {
	// decodes are the arguments' decodes from JSON: the authorizer's and the handler's.
	decodes, canonicalizations, sessionChecks int64
	// windowLookups are Window(id) round trips; stackLookups Windows() round trips (the
	// stacking order, read once to find what lies under the input).
	windowLookups, stackLookups int64
	// handlerLookups are the lookups the handler made itself (included above).
	handlerLookups int64
}

// TestPipelineCountsOnce: one call passes each step of the pipeline once. Its arguments are
// decoded from JSON once, into the object the policy decides on and the handler receives
// (tool.Call.Arguments; the handler's typed decode fills its struct from it and parses no
// JSON), its name is canonicalized once, its session's state checked once, and its window
// looked up once: the handler acts on the window the authorizer decided on
// (tool.Call.Window).
//
// Before the pipeline was one pass, a click on a window cost 3 decodes (the authorizer's,
// the handler's name check, the handler's typed decode), 3 canonicalizations (dispatch,
// sanitize, policy), 2 session checks (dispatch, authorize) and 2 lookups of the same
// window (authorizer, handler); after it, still 2 decodes (the handler's typed decode
// parsed the re-encoded arguments).
func TestPipelineCountsOnce(t *testing.T) {
	desk := &countingDesktop{fakeDesktop: &fakeDesktop{}}
	own := spawn(t, "/usr/bin/sleep", "300")
	ownWin := desk.add(own, x11.Rect{X: 0, Y: 0, Width: 400, Height: 300}, "own")

	var handlerLookups atomic.Int64
	var got *tool.Call
	handler := func(ctx context.Context, call *tool.Call) (*tool.Result, error) {
		var a struct {
			PID      *int     `json:"pid"`
			WindowID *uint32  `json:"window_id"`
			X        *float64 `json:"x"`
			Y        *float64 `json:"y"`
			Text     *string  `json:"text"`
		}
		if err := call.Decode(&a); err != nil {
			return nil, err
		}
		got = call
		// What worker/desktop's resolve does: the authorizer's window when it is the one
		// named, else a lookup.
		if a.PID != nil && (call.Window == nil || call.Window.PID != *a.PID) {
			handlerLookups.Add(1)
			if a.WindowID != nil {
				desk.Window(ctx, *a.WindowID)
			} else {
				desk.Windows(ctx)
			}
		}
		return &tool.Result{}, nil
	}
	reg := tool.NewRegistry()
	reg.Register(tool.Tool{Name: "click", InputSchema: windowSchema, Touches: tool.Touches{Window: true}, Handler: handler})
	reg.Register(tool.Tool{Name: "type_text", InputSchema: windowSchema, Touches: tool.Touches{Window: true}, Handler: handler})
	reg.Register(tool.Tool{Name: "noop", Handler: handler, Quick: true})
	s := countingSession(t, desk, reg)
	s.state.RecordLaunch(own)

	var steps [numSteps]atomic.Int64
	stepCounter.Store(&steps)
	t.Cleanup(func() { stepCounter.Store(nil) })
	var handlerParses atomic.Int64 // the handler's decodes from JSON
	t.Cleanup(tool.CountParses(&handlerParses))

	tests := []struct {
		name string
		tool string
		args map[string]any
		want callWork
	}{
		// The window is found in the one window list its stacking check reads: one
		// desktop query in all.
		{name: "click on a window", tool: "click", args: map[string]any{"pid": own, "window_id": ownWin, "x": 10, "y": 10, "_mode": "x"},
			want: callWork{decodes: 1, canonicalizations: 1, sessionChecks: 1, stackLookups: 1}},
		{name: "click on a pid's window", tool: "click", args: map[string]any{"pid": own, "x": 10, "y": 10},
			want: callWork{decodes: 1, canonicalizations: 1, sessionChecks: 1, stackLookups: 1}},
		{name: "keys to a pid's window", tool: "type_text_chars", args: map[string]any{"pid": own, "text": "hi"},
			want: callWork{decodes: 1, canonicalizations: 1, sessionChecks: 1, stackLookups: 1}},
		{name: "keys to the focused window", tool: "type_text", args: map[string]any{"text": "hi"},
			want: callWork{decodes: 1, canonicalizations: 1, sessionChecks: 1, stackLookups: 1}},
		{name: "no target", tool: "noop", args: map[string]any{},
			want: callWork{decodes: 1, canonicalizations: 1, sessionChecks: 1}},
	}
	desk.focus(ownWin)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range steps {
				steps[i].Store(0)
			}
			desk.window.Store(0)
			desk.windows.Store(0)
			handlerLookups.Store(0)
			handlerParses.Store(0)
			got = nil
			run, _ := s.startCall(uint64(i+1), 0, &cuav1.CallTool{Name: tt.tool, Arguments: mustArgs(tt.args)})
			if run == nil {
				t.Fatalf("startCall(%s) refused", tt.tool)
			}
			run()
			if got == nil {
				t.Fatalf("%s: the handler did not run", tt.tool)
			}
			if got.Arguments == nil {
				t.Errorf("%s: Call.Arguments = nil, want the authorizer's decoded arguments", tt.tool)
			}
			work := callWork{
				decodes: steps[stepDecode].Load() + handlerParses.Load(), canonicalizations: steps[stepCanonicalize].Load(),
				sessionChecks: steps[stepSessionCheck].Load(),
				windowLookups: desk.window.Load(), stackLookups: desk.windows.Load(), handlerLookups: handlerLookups.Load(),
			}
			if work != tt.want {
				t.Errorf("%s: work = %+v, want %+v", tt.tool, work, tt.want)
			}
		})
	}
}

// countingSession returns a standard session of a worker whose authorizer resolves through
// desk, replying on a channel nobody reads.
func countingSession(t *testing.T, desk *countingDesktop, reg *tool.Registry) *session {
	t.Helper()
	inv, _ := authz.DefaultInventory().With(authz.MetadataOnly("noop", "test", authz.R0, authz.ResourceNone, authz.Annotations{}))
	cfg := Config{Now: time.Now, Logger: slog.New(slog.DiscardHandler), DefaultDeadline: time.Minute, MaxInFlight: 8}
	a := &authorizer{now: time.Now, log: cfg.Logger, inventory: inv, pipe: authz.NewPipeline(nil, inv),
		res: &resolver{desk: desk, protect: newProtector(nil), selfPID: os.Getpid(), pinnable: map[string]bool{}}}
	a.bind(reg, desk)
	w := &worker{cfg: cfg, log: cfg.Logger, reg: reg, authorizer: a, baseCtx: t.Context(), deadlines: newDeadlines(time.Now)}
	here, there, err := wire.SessionPair()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { there.Close() })
	conn, err := wire.NewSessionConn(here)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	now := time.Now()
	auth, err := authz.NewAuthority(authz.Ceiling{AllowedModes: []authz.Mode{authz.Standard}, MaxSessionTTL: time.Hour, MaxIdleTTL: time.Hour},
		authz.SessionRequest{Label: "count", Mode: authz.Standard, TTL: time.Hour, IdleTTL: time.Hour, Generation: "07"}, inv, now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.deadlines.stop)
	s := &session{w: w, conn: conn, label: "count", authority: auth, state: tool.NewSession("count", "standard"),
		lastActivity: now, inflight: map[uint64]*inflightCall{}, asking: map[authz.GrantKey]*pendingConsent{}}
	s.ctx, s.cancel = context.WithCancelCause(t.Context())
	return s
}
