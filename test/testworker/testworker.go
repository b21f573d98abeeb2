// Package testworker is the worker that test binaries re-execute: the real worker runtime
// with extra test-only tools, among them the side-effect oracle (a tool that appends a
// marker line to a file). It is imported only by tests; a test in cmd/cua-host fails if the
// shipped binary depends on it.
package testworker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/proto/contract"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/worker"
	"github.com/cua-host/cua-host/worker/tool"
)

// MaybeRun turns the current process into a worker when it was started as one (argv[1] is
// contract.WorkerSubcommand) and exits; otherwise it returns. Call it first in TestMain.
func MaybeRun() {
	if len(os.Args) > 1 && os.Args[1] == contract.WorkerSubcommand {
		os.Exit(worker.Main(os.Args[2:], worker.Config{NewRegistry: NewRegistry, ExtraInventory: Inventory()}))
	}
}

// NewRegistry returns a registry with the test-only tools.
func NewRegistry(ctx context.Context, hello *cuav1.Hello, _ *slog.Logger) (*tool.Registry, io.Closer, error) {
	reg := tool.NewRegistry()
	Register(reg)
	return reg, nil, nil
}

// Inventory classifies the test-only tools for worker.Config.ExtraInventory: R0,
// metadata_only, so a standard session runs them without consent and a bounded session
// only when its manifest lists them. They never appear in the shipped inventory.
func Inventory() []authz.Entry {
	none := authz.ResourceNone
	return []authz.Entry{
		authz.MetadataOnly("noop", "Do nothing (test only).", authz.R0, none, authz.Annotations{ReadOnly: true, Idempotent: true}),
		authz.MetadataOnly("marker", "Append a marker line to a file: the side-effect oracle (test only).", authz.R0, none, authz.Annotations{}),
		authz.MetadataOnly("sleep", "Sleep (test only).", authz.R0, none, authz.Annotations{}),
		authz.MetadataOnly("marker_after_sleep", "Sleep, then append a marker line (test only).", authz.R0, none, authz.Annotations{}),
		authz.MetadataOnly("panic", "Panic (test only).", authz.R0, none, authz.Annotations{}),
	}
}

// Register adds the test-only tools to reg:
//
//	noop {}                                 returns at once
//	marker {path, marker}                   appends "marker\n" to path (the side-effect oracle)
//	sleep {ms}                              waits ms milliseconds or until cancelled
//	marker_after_sleep {path, marker, ms}   sleeps, then appends the marker
//	panic {}                                panics
func Register(reg *tool.Registry) {
	reg.Register(tool.Tool{
		Name:        "noop",
		Description: "Do nothing (test only).",
		Annotations: tool.Annotations{ReadOnly: true, Idempotent: true},
		Quick:       true,
		Handler: func(ctx context.Context, call *tool.Call) (*tool.Result, error) {
			return &tool.Result{}, nil
		},
	})
	reg.Register(tool.Tool{
		Name:        "marker",
		Description: "Append a marker line to a file (test only).",
		Handler: func(ctx context.Context, call *tool.Call) (*tool.Result, error) {
			var a struct {
				Path   string `json:"path"`
				Marker string `json:"marker"`
			}
			if err := call.Decode(&a); err != nil {
				return nil, err
			}
			if err := appendLine(a.Path, a.Marker); err != nil {
				return nil, err
			}
			return tool.TextResult("wrote "+a.Marker, map[string]string{"marker": a.Marker}), nil
		},
	})
	reg.Register(tool.Tool{
		Name:        "sleep",
		Description: "Sleep (test only).",
		Handler: func(ctx context.Context, call *tool.Call) (*tool.Result, error) {
			var a struct {
				MS int `json:"ms"`
			}
			if err := call.Decode(&a); err != nil {
				return nil, err
			}
			if err := sleep(ctx, a.MS); err != nil {
				return nil, err
			}
			return tool.TextResult("slept", nil), nil
		},
	})
	reg.Register(tool.Tool{
		Name:        "marker_after_sleep",
		Description: "Sleep, then append a marker line (test only).",
		Handler: func(ctx context.Context, call *tool.Call) (*tool.Result, error) {
			var a struct {
				Path   string `json:"path"`
				Marker string `json:"marker"`
				MS     int    `json:"ms"`
			}
			if err := call.Decode(&a); err != nil {
				return nil, err
			}
			if err := sleep(ctx, a.MS); err != nil {
				return nil, err
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if err := appendLine(a.Path, a.Marker); err != nil {
				return nil, err
			}
			return tool.TextResult("wrote "+a.Marker, nil), nil
		},
	})
	reg.Register(tool.Tool{
		Name:        "panic",
		Description: "Panic (test only).",
		Handler: func(ctx context.Context, call *tool.Call) (*tool.Result, error) {
			panic("test panic")
		},
	})
}

func sleep(ctx context.Context, ms int) error {
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open marker file: %w", err)
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("write marker: %w", err)
	}
	return f.Close()
}
