// Command sessionfuzz is the session-channel harness: through the real host (host.Start,
// this program re-executed as the worker) it mints session channels and drives one at a
// time ("the victim") with generated and mutated envelopes — bad lengths, truncated and
// garbage frames, wrong generations and versions, replayed and out-of-order request ids,
// cancels of unknown and in-flight ids, deadlines in the past, floods past the in-flight
// limit, huge arguments, reply-kind envelopes — while bystander sessions on the same
// worker call the marker tool steadily. A reference model of docs/protocol.md's session
// channel (framing, strict decoding, the ordered checks) predicts every reply, and the
// harness checks:
//
//   - each refusal is a ToolResult with outcome NOT_STARTED and the documented code;
//   - no marker is written for a refused call, every COMPLETED call wrote its marker, and
//     no marker appears that no call may have written;
//   - the channel closes exactly for the documented violations, and never blocks the
//     harness beyond a bound;
//   - the bystander sessions are unaffected (every call COMPLETED);
//   - the worker never panics or exits on its own.
//
// Usage:
//
//	go run ./test/sessionfuzz -duration 60s [-seed N] [-out DIR] [-huge=false]
//	go run ./test/sessionfuzz -replay DIR/violation-….json
//
// The exit status is 0 only with zero violations.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/cua-host/cua-host/test/fuzzkit"
)

func main() { fuzzkit.Main("sessionfuzz", run) }

func run(ctx context.Context, args []string, stdout io.Writer) int {
	fs := flag.NewFlagSet("sessionfuzz", flag.ContinueOnError)
	duration := fs.Duration("duration", 60*time.Second, "how long to fuzz")
	seed := fs.Uint64("seed", 0, "seed (0: from the clock); victim i uses PCG(seed, i)")
	only := fs.Int64("victim", -1, "run only victim index N of -seed")
	out := fs.String("out", "", "directory for reproducers (default: a new temp dir)")
	replay := fs.String("replay", "", "re-run one reproducer file")
	huge := fs.Bool("huge", true, "include arguments of up to and over the 32 MiB limit")
	perRound := fs.Int("victims-per-worker", 25, "victim channels per worker before it is replaced")
	fs.SetOutput(stdout)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano())
	}
	var err error
	if *out, err = fuzzkit.OutDir("sessionfuzz", *out); err != nil {
		fmt.Fprintln(stdout, "sessionfuzz:", err)
		return 2
	}
	tmp, err := os.MkdirTemp("", "sessionfuzz-work-")
	if err != nil {
		fmt.Fprintln(stdout, "sessionfuzz:", err)
		return 2
	}
	defer os.RemoveAll(tmp)

	total := newResult()
	rounds := 0
	start := time.Now()
	var counter atomic.Uint64
	next := func() uint64 { return counter.Add(1) - 1 }
	var one *victimSeq
	switch {
	case *replay != "":
		one, err = loadRepro(*replay)
		if err != nil {
			fmt.Fprintln(stdout, "sessionfuzz:", err)
			return 2
		}
	case *only >= 0:
		one = generate(*seed, uint64(*only), *huge)
	}
	if one != nil {
		b, _ := json.MarshalIndent(one, "", " ")
		fmt.Fprintf(stdout, "%s\n", b)
		merge(total, runRound(ctx, *seed, next, 1, *huge, tmp, one), *out, stdout)
		rounds = 1
	} else {
		dctx, cancel := context.WithTimeout(ctx, *duration)
		for dctx.Err() == nil {
			merge(total, runRound(dctx, *seed, next, *perRound, *huge, tmp, nil), *out, stdout)
			rounds++
		}
		cancel()
	}
	elapsed := time.Since(start)
	fmt.Fprintf(stdout, "\nsessionfuzz: seed %d, %v, %d workers, %d victim channels, %d envelopes (%.0f envelopes/s), %d bystander calls\n",
		*seed, elapsed.Round(time.Millisecond), rounds, total.victims, total.envelopes, float64(total.envelopes)/elapsed.Seconds(), total.bystander)
	fmt.Fprintf(stdout, "distinct reactions (%d):\n", len(total.reactions))
	fuzzkit.PrintCounts(stdout, total.reactions)
	fmt.Fprintf(stdout, "violations: %d (reproducers in %s)\n", len(total.violations), *out)
	for _, v := range total.violations {
		fmt.Fprintln(stdout, "VIOLATION", v)
	}
	if len(total.violations) > 0 {
		return 1
	}
	return 0
}

func merge(total, r *result, out string, stdout io.Writer) {
	total.envelopes += r.envelopes
	total.victims += r.victims
	total.bystander += r.bystander
	for k, v := range r.reactions {
		total.reactions[k] += v
	}
	for _, v := range r.violations {
		fmt.Fprintln(stdout, "VIOLATION", v)
	}
	total.violations = append(total.violations, r.violations...)
	for _, seq := range r.repros {
		path := filepath.Join(out, fmt.Sprintf("violation-seed%d-victim%d.json", seq.Seed, seq.Index))
		b, _ := json.MarshalIndent(seq, "", " ")
		if err := os.WriteFile(path, b, 0o644); err == nil {
			fmt.Fprintf(stdout, "    reproducer: %s\n    rerun: go run ./test/sessionfuzz -seed %d -victim %d\n", path, seq.Seed, seq.Index)
		}
	}
}

func loadRepro(path string) (*victimSeq, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v victimSeq
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &v, nil
}
