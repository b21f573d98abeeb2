// Command soak runs one worker under steady mixed load for a while and watches for leaks:
// N sessions each call a mix of test tools (noop, marker, short sleeps, cancelled sleeps,
// health_report, and calls that must be refused) while the harness samples, every few
// seconds, the descriptors (/proc/PID/fd), goroutines (the worker reports its own through
// a soak-only tool; the host's is runtime.NumGoroutine), threads and RSS
// (/proc/PID/status) of the host and of the worker. It prints the series and fails when a
// figure grows: the mean of the last third of the samples is compared with the first third
// (after warm-up), with a tolerance per figure. Every call's outcome is checked too.
//
// Usage:
//
//	go run ./test/soak -duration 2m -sessions 16 [-interval 5s]
//
// The exit status is 0 only when every figure is flat and every call behaved.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/proto/contract"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/test/testworker"
	"github.com/cua-host/cua-host/worker"
	"github.com/cua-host/cua-host/worker/tool"
)

// statsTool is the soak-only tool through which the worker reports its own runtime.
const statsTool = "soak_stats"

// maybeRunWorker turns this process into a worker (the test tools plus soak_stats) when
// it was started as one, and exits.
func maybeRunWorker() {
	if len(os.Args) > 1 && os.Args[1] == contract.WorkerSubcommand {
		inv := append(testworker.Inventory(), authz.MetadataOnly(statsTool, "The worker's goroutines and heap (soak only).", authz.R0, authz.ResourceNone, authz.Annotations{ReadOnly: true}))
		os.Exit(worker.Main(os.Args[2:], worker.Config{NewRegistry: soakRegistry, ExtraInventory: inv}))
	}
}

func soakRegistry(ctx context.Context, hello *cuav1.Hello, log *slog.Logger) (*tool.Registry, io.Closer, error) {
	reg, closer, err := testworker.NewRegistry(ctx, hello, log)
	if err != nil {
		return nil, nil, err
	}
	reg.Register(tool.Tool{
		Name:        statsTool,
		Description: "The worker's goroutines and heap (soak only).",
		Annotations: tool.Annotations{ReadOnly: true},
		Quick:       true,
		Handler: func(ctx context.Context, call *tool.Call) (*tool.Result, error) {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return tool.TextResult("stats", map[string]any{"goroutines": runtime.NumGoroutine(), "heap_alloc": ms.HeapAlloc}), nil
		},
	})
	return reg, closer, nil
}

func main() {
	maybeRunWorker()
	if err := host.SealInheritedFDs(); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout))
}

func run(ctx context.Context, args []string, stdout io.Writer) int {
	var o options
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.DurationVar(&o.duration, "duration", 2*time.Minute, "how long to soak")
	fs.IntVar(&o.sessions, "sessions", 16, "concurrent sessions on the one worker")
	fs.DurationVar(&o.interval, "interval", 5*time.Second, "sampling interval")
	fs.BoolVar(&o.noGrowth, "check-growth", true, "fail when a figure grows")
	fs.SetOutput(stdout)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rep, err := soak(ctx, o)
	if err != nil {
		fmt.Fprintln(stdout, "soak:", err)
		return 1
	}
	rep.print(stdout)
	if !rep.ok() {
		return 1
	}
	return 0
}
