// Command faults is the fault-injection harness: under load from several sessions it
// kills (SIGKILL) or stops (SIGSTOP, then SIGCONT or SIGKILL) the worker at random
// points, and does the same to an MCP proxy process (host.StartProxy, this program
// re-executed) while an agent calls through it — or kills the worker under the proxy.
// After every round it checks that:
//
//   - every call got an outcome consistent with the side-effect oracle (the marker tool):
//     COMPLETED ⇒ the marker was written, NOT_STARTED ⇒ it was not, and no marker appears
//     that no call may have written;
//   - a proxy's death ends its session on the worker;
//   - every process is accounted for: the worker and the proxy are gone and reaped, and
//     this process has no child left (no zombie).
//
// Usage:
//
//	go run ./test/faults -duration 60s [-seed N] [-sessions 4] [-proxy=true]
//
// The exit status is 0 only with zero violations.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/mcpproxy"
	"github.com/cua-host/cua-host/proto/contract"
	"github.com/cua-host/cua-host/test/testworker"
)

// maybeRunRoles turns this process into a worker or an MCP proxy when it was started as
// one, and exits.
func maybeRunRoles() {
	testworker.MaybeRun()
	if len(os.Args) > 1 && os.Args[1] == contract.ProxySubcommand {
		os.Exit(mcpproxy.Main(os.Args[2:], "faults"))
	}
}

func main() {
	maybeRunRoles()
	if err := host.SealInheritedFDs(); err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout))
}

type options struct {
	duration   time.Duration
	seed       uint64
	sessions   int
	perSession int
	proxy      bool
	maxRounds  int
}

func run(ctx context.Context, args []string, stdout io.Writer) int {
	var o options
	fs := flag.NewFlagSet("faults", flag.ContinueOnError)
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "how long to inject faults")
	fs.Uint64Var(&o.seed, "seed", 0, "seed (0: from the clock)")
	fs.IntVar(&o.sessions, "sessions", 4, "sessions under load per worker round")
	fs.IntVar(&o.perSession, "callers", 2, "concurrent callers per session")
	fs.BoolVar(&o.proxy, "proxy", true, "include MCP proxy rounds")
	fs.IntVar(&o.maxRounds, "rounds", 0, "stop after this many rounds (0: no limit)")
	fs.SetOutput(stdout)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano())
	}
	t := faultRun(ctx, o)
	t.print(stdout, o)
	if len(t.violations) > 0 {
		return 1
	}
	return 0
}

// faultRun alternates worker rounds and proxy rounds until the duration is over.
func faultRun(ctx context.Context, o options) *tally {
	t := newTally()
	dir, err := os.MkdirTemp("", "faults-")
	if err != nil {
		t.violate("temp dir: %v", err)
		return t
	}
	defer os.RemoveAll(dir)
	r := rand.New(rand.NewPCG(o.seed, 0))
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	for n := 0; ctx.Err() == nil && (o.maxRounds == 0 || n < o.maxRounds); n++ {
		if o.proxy && n%3 == 2 {
			proxyRound(context.WithoutCancel(ctx), t, r, n, dir)
		} else {
			workerRound(context.WithoutCancel(ctx), t, r, n, dir, o.sessions, o.perSession)
		}
	}
	return t
}

func (t *tally) print(w io.Writer, o options) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(w, "faults: seed %d, %d calls\n", o.seed, t.calls)
	keys := make([]string, 0, len(t.rounds))
	for k := range t.rounds {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Fprintln(w, "rounds:")
	for _, k := range keys {
		fmt.Fprintf(w, "  %6d  %s\n", t.rounds[k], k)
	}
	fmt.Fprintln(w, "outcomes:")
	for _, k := range []string{"completed", "not_started", "unknown", ""} {
		if t.outcomes[k] > 0 {
			name := k
			if k == "" {
				name = "(none)"
			}
			fmt.Fprintf(w, "  %6d  %s\n", t.outcomes[k], name)
		}
	}
	fmt.Fprintln(w, "why calls did not complete:")
	dk := make([]string, 0, len(t.details))
	for k := range t.details {
		dk = append(dk, k)
	}
	slices.Sort(dk)
	for _, k := range dk {
		fmt.Fprintf(w, "  %6d  %s\n", t.details[k], k)
	}
	fmt.Fprintf(w, "violations: %d\n", len(t.violations))
	if len(t.violations) > 0 {
		fmt.Fprintln(w, strings.Join(t.violations, "\n"))
	}
}
