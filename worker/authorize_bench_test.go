package worker

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/policy"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

const benchYAML = `allow:
  tools: [noop, get_screen_size, zoom]
  rules:
    - tool: click
      constraints: {x: {min: 0, max: 4000}, y: {min: 0, max: 4000}}
deny:
  tools: [kill_app]
`

const benchRego = `package cua.policy

default allow := false

allow if input.tool in {"noop", "get_screen_size", "zoom"}

allow if {
	input.tool == "click"
	input.arguments.x <= 4000
	input.arguments.y <= 4000
}
`

// BenchmarkAuthorize measures the authorization pipeline alone (decode, sanitize, session
// state, target resolution, invariants, policy, classification, mode, re-encode) for one
// call, without the channel or the handler.
func BenchmarkAuthorize(b *testing.B) {
	policies := []struct {
		name string
		set  func(b *testing.B) *policy.Set
	}{
		{"none", func(*testing.B) *policy.Set { return nil }},
		{"yaml", func(b *testing.B) *policy.Set { return benchPolicy(b, policy.KindYAML, "p.yaml", benchYAML) }},
		{"rego", func(b *testing.B) *policy.Set { return benchPolicy(b, policy.KindRego, "p.rego", benchRego) }},
	}
	for _, p := range policies {
		a, s, ownPID, ownWin, foreignPID, foreignWin := benchAuthorizer(b, p.set(b))
		calls := []struct {
			name string
			tool string
			args string
		}{
			{"noop", "noop", `{}`},
			{"click_own_window", "click", mustString(map[string]any{"pid": ownPID, "window_id": ownWin, "x": 10, "y": 10})},
			{"click_granted_window", "click", mustString(map[string]any{"pid": foreignPID, "window_id": foreignWin, "x": 10, "y": 10, "_mode": "x"})},
		}
		for _, c := range calls {
			b.Run(p.name+"/"+c.name, func(b *testing.B) {
				ctx := context.Background()
				raw := []byte(c.args)
				b.ReportAllocs()
				for b.Loop() {
					if r := s.check(); r != nil {
						b.Fatal(r)
					}
					if _, _, r := a.authorize(ctx, s, newRequest(c.tool, raw)); r != nil {
						b.Fatal(r)
					}
				}
			})
		}
	}
}

func mustString(v any) string { return string(mustArgs(v)) }

func benchPolicy(b *testing.B, kind policy.Kind, name, src string) *policy.Set {
	l, err := policy.Parse(kind, []policy.File{{Name: name, Data: []byte(src)}})
	if err != nil {
		b.Fatal(err)
	}
	return policy.NewSet(nil, l)
}

// benchAuthorizer builds an authorizer and a standard session over a fake desktop with
// one window the session launched and one foreign window it holds a grant for.
func benchAuthorizer(b *testing.B, set *policy.Set) (*authorizer, *session, int, uint32, int, uint32) {
	inv, _ := authz.DefaultInventory().With(authz.MetadataOnly("noop", "test", authz.R0, authz.ResourceNone, authz.Annotations{}))
	desk := &fakeDesktop{}
	own := spawn(b, "/usr/bin/sleep", "300")
	foreign := spawn(b, "/usr/bin/sleep", "300")
	ownWin := desk.add(own, x11.Rect{X: 0, Y: 0, Width: 400, Height: 300}, "own")
	foreignWin := desk.add(foreign, x11.Rect{X: 500, Y: 0, Width: 400, Height: 300}, "foreign")
	reg := tool.NewRegistry()
	noop := func(context.Context, *tool.Call) (*tool.Result, error) { return &tool.Result{}, nil }
	reg.Register(tool.Tool{Name: "noop", Handler: noop})
	reg.Register(tool.Tool{Name: "click", InputSchema: windowSchema, Touches: tool.Touches{Window: true}, Handler: noop})
	cfg := Config{Now: time.Now, Logger: slog.New(slog.DiscardHandler)}
	a := &authorizer{now: time.Now, log: cfg.Logger, inventory: inv, pipe: authz.NewPipeline(set, inv),
		res: &resolver{desk: desk, protect: newProtector(nil), selfPID: os.Getpid(), pinnable: map[string]bool{}}}
	a.bind(reg, desk)
	w := &worker{cfg: cfg, log: cfg.Logger, reg: reg, authorizer: a}
	now := time.Now()
	s := &session{w: w, label: "bench", state: tool.NewSession("bench", "standard"), lastActivity: now,
		authority: &authz.Authority{Label: "bench", Mode: authz.Standard, Created: now, Expires: now.Add(time.Hour), IdleTTL: time.Hour}}
	s.state.RecordLaunch(own)
	fw, _ := desk.Window(context.Background(), foreignWin)
	info, _ := readStat(foreign)
	s.grants.Add(authz.Resource{Kind: authz.ResourceWindow, Op: authz.OpInput, PID: foreign, Window: fw.ID, StartTime: info.start}.Key(), now, now.Add(time.Hour))
	// Sanity: the calls are allowed.
	for _, args := range []map[string]any{{"pid": own, "window_id": ownWin, "x": 1, "y": 1}, {"pid": foreign, "window_id": foreignWin, "x": 1, "y": 1}} {
		raw, _ := json.Marshal(args)
		if _, _, r := a.authorize(context.Background(), s, newRequest("click", raw)); r != nil {
			b.Fatalf("setup: %v", r)
		}
	}
	return a, s, own, ownWin, foreign, foreignWin
}
