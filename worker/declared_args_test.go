package worker

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// pokeArgs is a test tool's argument struct. Its target and point have names no other
// tool uses (proc, win, at_x, at_y): the worker finds them only through the struct.
type pokeArgs struct {
	Proc *int     `json:"proc"`
	Win  *uint32  `json:"win"`
	AtX  *float64 `json:"at_x"`
	AtY  *float64 `json:"at_y"`
	Note string   `json:"note"`
}

func (a pokeArgs) Target() tool.Target {
	t := tool.Target{}
	if a.Proc != nil {
		t.PID = *a.Proc
	}
	if a.Win != nil {
		t.WindowID = *a.Win
	}
	return t
}

func (a pokeArgs) AppendPoints(out []x11.Point) []x11.Point {
	return tool.AppendPoint(out, a.AtX, a.AtY)
}

func (a *pokeArgs) Pin(pid int, window uint32) { a.Proc, a.Win = &pid, &window }

// stdPokeArgs is a test tool's argument struct with the names every tool uses.
type stdPokeArgs struct {
	PID  *int     `json:"pid"`
	WID  *uint32  `json:"window_id"`
	X    *float64 `json:"x"`
	Y    *float64 `json:"y"`
	Note string   `json:"note"`
}

// TestADeclaredToolIsDecodedOnce: a tool added with one declaration — its argument
// struct (tool.NewArgs) and what it touches — and its handler is decoded once, by the
// worker: the target is resolved and decided on from the struct (a target named only in
// the struct's own names reaches the hard invariants), the decided window is pinned into
// it, and the handler gets that very value without parsing or decoding anything again.
func TestADeclaredToolIsDecodedOnce(t *testing.T) {
	var got *pokeArgs
	poke := tool.Tool{Name: "poke_window", Args: tool.NewArgs[pokeArgs], Touches: tool.Touches{Window: true},
		Handler: func(ctx context.Context, call *tool.Call) (*tool.Result, error) {
			a, err := tool.ArgsOf[pokeArgs](call)
			if err != nil {
				return nil, err
			}
			got = a
			return tool.TextResult("poked "+a.Note, nil), nil
		}}
	a, s := declaredAuthorizer(t, "click", poke)
	desk := a.res.desk.(*fakeDesktop)
	own := spawn(t, "/usr/bin/sleep", "300")
	ownWin := desk.add(own, x11.Rect{X: 100, Y: 100, Width: 300, Height: 200}, "own")
	selfWin := desk.add(os.Getpid(), x11.Rect{X: 500, Y: 100, Width: 300, Height: 200}, "worker")
	s.state.RecordLaunch(own)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	var parses atomic.Int64
	defer tool.CountParses(&parses)()
	call, tl, r := a.authorize(ctx, s, newRequest("poke_window", mustArgs(map[string]any{"proc": own, "at_x": 5, "at_y": 6, "note": "hi"})))
	if r != nil {
		t.Fatalf("poke_window on its own window: %v", r)
	}
	typed, ok := call.Args.(*pokeArgs)
	if !ok || call.ArgsErr != nil {
		t.Fatalf("Call.Args = %T (%v), want *pokeArgs", call.Args, call.ArgsErr)
	}
	if typed.Win == nil || *typed.Win != ownWin || call.Window == nil || call.Window.ID != ownWin {
		t.Fatalf("pinned window %v, resolved %+v; want %d in both", typed.Win, call.Window, ownWin)
	}
	// The pin goes into the struct; the object the policy decided on is left as sent,
	// and the arguments the call runs with (what the journal records) name the window.
	if _, ok := call.Arguments["window_id"]; ok || !call.Pinned {
		t.Errorf("Arguments %v, Pinned %v: want the policy's object without the pin, and the call marked pinned", call.Arguments, call.Pinned)
	}
	if run := call.RunArguments(); run["pid"] != float64(own) || run["window_id"] != float64(ownWin) || run["note"] != "hi" {
		t.Errorf("RunArguments = %v, want the call's arguments with pid %d and window %d", run, own, ownWin)
	}
	res, err := invoke(ctx, tl, call)
	if err != nil || res.Content[0].Text != "poked hi" {
		t.Fatalf("handler = %+v, %v", res, err)
	}
	if got != typed {
		t.Errorf("the handler read %p, the worker decided on %p: want the same value", got, typed)
	}
	if n := parses.Load(); n != 0 {
		t.Errorf("the call's arguments were parsed from JSON %d times after the worker's decode, want 0", n)
	}

	// The worker's own window, named in the struct's names only: refused by the hard
	// invariant, so the resolver read the struct (by the generic names this call names
	// no window, and the point without scope "desktop" would be invalid_arguments).
	_, _, r = a.authorize(ctx, s, newRequest("poke_window", mustArgs(map[string]any{"proc": os.Getpid(), "win": selfWin, "at_x": 5, "at_y": 6})))
	if r == nil || r.Code != authz.CodeSelfTargetDenied {
		t.Fatalf("poke_window on the worker's window: %v, want self_target_denied", r)
	}
}

// TestAnUndecodableCallIsRefusedWhereItsHandlerRuns: arguments the declared struct does
// not take leave the decision as it was (the target read by the generic names) and are
// refused, with the decode's own message, when the handler asks for them.
func TestAnUndecodableCallIsRefusedWhereItsHandlerRuns(t *testing.T) {
	ran := false
	poke := tool.Tool{Name: "poke_std", Args: tool.NewArgs[stdPokeArgs], Touches: tool.Touches{Window: true},
		Handler: func(ctx context.Context, call *tool.Call) (*tool.Result, error) {
			if _, err := tool.ArgsOf[stdPokeArgs](call); err != nil {
				return nil, err
			}
			ran = true
			return &tool.Result{}, nil
		}}
	a, s := declaredAuthorizer(t, "click", poke)
	desk := a.res.desk.(*fakeDesktop)
	own := spawn(t, "/usr/bin/sleep", "300")
	ownWin := desk.add(own, x11.Rect{X: 100, Y: 100, Width: 300, Height: 200}, "own")
	s.state.RecordLaunch(own)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	call, tl, r := a.authorize(ctx, s, newRequest("poke_std", mustArgs(map[string]any{"pid": own, "window_id": ownWin, "x": 5, "y": 6, "bogus": 1, "note": 7})))
	if r != nil {
		t.Fatalf("poke_std with an unknown argument: refused before its handler: %v", r)
	}
	if call.Window == nil || call.Window.ID != ownWin || call.Args != nil {
		t.Fatalf("window %+v, Args %v: want the window decided on and no struct", call.Window, call.Args)
	}
	_, err := invoke(ctx, tl, call)
	var rf *authz.Refusal
	if !errors.As(err, &rf) || rf.Code != authz.CodeInvalidArguments || rf.Message != `unknown argument "bogus"` || ran {
		t.Fatalf("handler = %v (ran %v), want the decode's refusal of bogus", err, ran)
	}
	// The same refusal as a handler's own strict decode of the arguments gives.
	want := tool.DecodeArgs(mustArgs(map[string]any{"pid": own, "window_id": ownWin, "x": 5, "y": 6, "bogus": 1, "note": 7}), new(stdPokeArgs))
	if want == nil || want.Error() != err.Error() {
		t.Errorf("refusal %q, the strict decode's %v", err, want)
	}
}

// TestADeclaredToolsHandlerCannotDecodeAgain: once the worker decoded a call into the
// struct its tool declares, a handler that decodes the arguments again (Call.Decode)
// panics: the call ends internal_error, nothing of it ran.
func TestADeclaredToolsHandlerCannotDecodeAgain(t *testing.T) {
	again := tool.Tool{Name: "poke_again", Args: tool.NewArgs[stdPokeArgs],
		Handler: func(ctx context.Context, call *tool.Call) (*tool.Result, error) {
			var a stdPokeArgs
			if err := call.Decode(&a); err != nil {
				return nil, err
			}
			return &tool.Result{}, nil
		}}
	a, s := declaredAuthorizer(t, "get_screen_size", again)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	call, tl, r := a.authorize(ctx, s, newRequest("poke_again", mustArgs(map[string]any{"note": "x"})))
	if r != nil {
		t.Fatal(r)
	}
	_, err := invoke(ctx, tl, call)
	var pe *panicError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "already decoded") {
		t.Fatalf("a declared tool's handler decoding again: %v, want a panic saying so", err)
	}
}

// TestOnePIDLimit: a pid out of range is refused by one check with one message, whether
// the call names it as pid or in the reference's target object.
func TestOnePIDLimit(t *testing.T) {
	a, s := declaredAuthorizer(t, "click", tool.Tool{Name: "poke_range", Args: tool.NewArgs[stdPokeArgs], Handler: func(context.Context, *tool.Call) (*tool.Result, error) { return &tool.Result{}, nil }})
	ctx := context.Background()
	const want = "pid must be an integer in [1, 2147483647]"
	for _, args := range []map[string]any{
		{"pid": 1 << 31, "x": 1, "y": 1},
		{"pid": 1 << 32, "x": 1, "y": 1},
		{"target": map[string]any{"kind": "window", "pid": 1 << 32, "window_id": 5}, "x": 1, "y": 1},
		{"target": map[string]any{"kind": "window", "pid": 1 << 31, "window_id": 5}, "x": 1, "y": 1},
		{"pid": -1, "x": 1, "y": 1},
	} {
		_, _, r := a.authorize(ctx, s, newRequest("poke_range", mustArgs(args)))
		if r == nil || r.Code != authz.CodeInvalidArguments || r.Message != want {
			t.Errorf("%v: %v, want invalid_arguments %q", args, r, want)
		}
	}
}

// TestEveryShippedToolDeclaresItsArguments: every tool a shipped worker registers, the
// worker's own included, declares the struct its calls are decoded into once (Tool.Args);
// its handler reads that value (tool.ArgsOf), and Call.Decode panics for it.
func TestEveryShippedToolDeclaresItsArguments(t *testing.T) {
	for _, tl := range Catalog() {
		if tl.Args == nil {
			t.Errorf("%s declares no argument struct (tool.Tool.Args)", tl.Name)
		}
	}
}
