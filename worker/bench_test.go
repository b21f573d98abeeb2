package worker

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/client"
	"github.com/cua-host/cua-host/proto/contract"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
	"github.com/cua-host/cua-host/worker/tool"
)

// inProcess runs a worker on a goroutine over real socketpairs and returns a client of one
// session on it.
func inProcess(tb testing.TB, register func(*tool.Registry)) *client.Conn {
	tb.Helper()
	hostEnd, workerEnd, err := wire.ControlPair()
	if err != nil {
		tb.Fatal(err)
	}
	hc, _ := wire.NewControlConn(hostEnd)
	wc, _ := wire.NewControlConn(workerEnd)
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), wc, Config{NewRegistry: func(ctx context.Context, h *cuav1.Hello, _ *slog.Logger) (*tool.Registry, io.Closer, error) {
			reg := tool.NewRegistry()
			if register != nil {
				register(reg)
			}
			return reg, nil, nil
		}, ExtraInventory: []authz.Entry{
			authz.MetadataOnly("noop", "Do nothing (test only).", authz.R0, authz.ResourceNone, authz.Annotations{}),
			authz.MetadataOnly("slow_noop", "Do nothing, not marked quick (test only).", authz.R0, authz.ResourceNone, authz.Annotations{}),
		}})
	}()
	gen := make([]byte, contract.GenerationLen)
	hc.Send(&cuav1.ControlFrame{ProtocolVersion: 1, Body: &cuav1.ControlFrame_Hello{Hello: &cuav1.Hello{
		MinVersion: 1, MaxVersion: 1, Generation: gen, Ceiling: authz.CeilingToProto(authz.DefaultCeiling())}}}, nil)
	if f, _, err := hc.Recv(); err != nil || f.GetReady() == nil {
		tb.Fatalf("Ready: %v %v", f, err)
	}
	mine, theirs, _ := wire.SessionPair()
	hc.Send(&cuav1.ControlFrame{ProtocolVersion: 1, CallId: 1, Body: &cuav1.ControlFrame_CreateSession{CreateSession: &cuav1.CreateSession{
		Label: "b", Mode: cuav1.Mode_MODE_STANDARD, TtlSeconds: 3600, IdleTtlSeconds: 3600}}}, theirs)
	theirs.Close()
	if f, _, err := hc.Recv(); err != nil || f.GetSessionCreated() == nil {
		tb.Fatalf("SessionCreated: %v %v", f, err)
	}
	c, err := client.New(mine, client.Options{Generation: gen, Version: 1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		c.Close()
		hc.Close()
		<-done
	})
	return c
}

func BenchmarkDispatchInProcess(b *testing.B) {
	c := inProcess(b, func(reg *tool.Registry) {
		reg.Register(tool.Tool{Name: "noop", Quick: true, Handler: func(context.Context, *tool.Call) (*tool.Result, error) { return &tool.Result{}, nil }})
	})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res, err := c.Call(ctx, "noop", nil); err != nil || res.Outcome != client.Completed {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkDispatchScheme measures no-op round trips (a quick tool and an ordinary one)
// with quick calls run on the session's reader and with every call on a goroutine of its
// own.
func BenchmarkDispatchScheme(b *testing.B) {
	for _, scheme := range []struct {
		name     string
		onReader bool
	}{{"quick_on_reader", true}, {"goroutine_per_call", false}} {
		for _, tl := range []string{"noop", "slow_noop"} {
			b.Run(scheme.name+"/"+tl, func(b *testing.B) {
				quickOnReader = scheme.onReader
				defer func() { quickOnReader = true }()
				c := inProcess(b, func(reg *tool.Registry) {
					reg.Register(tool.Tool{Name: "noop", Quick: true, Handler: func(context.Context, *tool.Call) (*tool.Result, error) { return &tool.Result{}, nil }})
					reg.Register(tool.Tool{Name: "slow_noop", Handler: func(context.Context, *tool.Call) (*tool.Result, error) { return &tool.Result{}, nil }})
				})
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					if res, err := c.Call(ctx, tl, nil); err != nil || res.Outcome != client.Completed {
						b.Fatal(res, err)
					}
				}
			})
		}
	}
}
