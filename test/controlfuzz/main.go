// Command controlfuzz is the control-channel harness: it starts real workers (this
// program re-executed through hosttest.SpawnRaw, the host's own spawn path) and drives their
// control channels with generated and mutated frame sequences — valid frames in valid and
// wrong orders, truncated, oversized and empty frames, unknown kinds, fields and
// versions, descriptors attached where none belong and missing where one must be,
// duplicate labels, revocations of unknown sessions, end-of-file at every step. A
// reference model of docs/protocol.md's state machine predicts each frame's reaction
// (reply kind and code, teardown and exit status), and after every step the harness checks:
//
//   - the worker never panics (stderr, exit status);
//   - the worker never runs a tool because of a malformed or out-of-order frame: marker
//     calls go to every session channel the harness ever attached, and the marker file
//     holds exactly the markers of the calls the model says ran;
//   - the worker keeps no descriptor of a refused frame: pipes and session channels sent
//     with it read end-of-file within a bound, while the worker is still running when the
//     documented reaction is an Error reply rather than teardown;
//   - the harness never blocks beyond a bound (every Recv and Send has a deadline).
//
// Usage:
//
//	go run ./test/controlfuzz -duration 60s [-seed N] [-out DIR] [-parallel 2] [-strict]
//	go run ./test/controlfuzz -replay DIR/violation-….json
//
// It prints frames per second, the distinct reactions seen with counts, known deviations
// (see known.go; -strict counts them as violations), and each violation with its seed,
// sequence index and a reproducer (the sequence as JSON, frames in hex) under -out. The
// exit status is 0 only with zero violations.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cua-host/cua-host/test/fuzzkit"
)

func main() { fuzzkit.Main("controlfuzz", run) }

type config struct {
	duration time.Duration
	seed     uint64
	only     int64
	out      string
	parallel int
	strict   bool
	replay   string
	verbose  bool
	maxSeqs  int64
}

func run(ctx context.Context, args []string, stdout io.Writer) int {
	var c config
	fs := flag.NewFlagSet("controlfuzz", flag.ContinueOnError)
	fs.DurationVar(&c.duration, "duration", 60*time.Second, "how long to fuzz")
	fs.Uint64Var(&c.seed, "seed", 0, "seed (0: from the clock); sequence i uses PCG(seed, i)")
	fs.Int64Var(&c.only, "seq", -1, "run only sequence index N of -seed")
	fs.StringVar(&c.out, "out", "", "directory for reproducers (default: a new temp dir)")
	fs.IntVar(&c.parallel, "parallel", 2, "workers fuzzed at once")
	fs.BoolVar(&c.strict, "strict", true, "count known deviations as violations (the worker no longer has any; -strict=false tolerates them)")
	fs.StringVar(&c.replay, "replay", "", "re-run one reproducer file")
	fs.BoolVar(&c.verbose, "v", false, "print every sequence's outcome")
	fs.Int64Var(&c.maxSeqs, "max", 0, "stop after this many sequences (0: no limit)")
	fs.SetOutput(stdout)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if c.seed == 0 {
		c.seed = uint64(time.Now().UnixNano())
	}
	out, err := fuzzkit.OutDir("controlfuzz", c.out)
	if err != nil {
		fmt.Fprintln(stdout, "controlfuzz:", err)
		return 2
	}
	c.out = out
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		fmt.Fprintln(stdout, "controlfuzz:", err)
		return 2
	}
	s := fuzz(ctx, c, stdout)
	s.print(stdout, c)
	if len(s.violations) > 0 {
		return 1
	}
	return 0
}

// summary aggregates outcomes.
type summary struct {
	mu         sync.Mutex
	seqs       int
	frames     int
	calls      int
	reactions  map[string]int
	known      map[string]int
	violations []string
	elapsed    time.Duration
}

func (s *summary) add(c config, seq *sequence, o *outcome, stdout io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seqs++
	s.frames += o.frames
	s.calls += o.calls
	for k, v := range o.reactions {
		s.reactions[k] += v
	}
	for k, v := range o.known {
		s.known[k] += v
	}
	if len(o.violations) == 0 {
		if c.verbose {
			fmt.Fprintf(stdout, "seq %d: ok (%d steps)\n", seq.Index, len(seq.Steps))
		}
		return
	}
	path := filepath.Join(c.out, fmt.Sprintf("violation-seed%d-seq%d.json", seq.Seed, seq.Index))
	if err := saveRepro(path, seq, o.violations); err != nil {
		path = "(not saved: " + err.Error() + ")"
	}
	for _, v := range o.violations {
		line := fmt.Sprintf("VIOLATION seed=%d seq=%d: %s\n    reproducer: %s\n    rerun: go run ./test/controlfuzz -seed %d -seq %d", seq.Seed, seq.Index, v, path, seq.Seed, seq.Index)
		s.violations = append(s.violations, line)
		fmt.Fprintln(stdout, line)
	}
}

func fuzz(ctx context.Context, c config, stdout io.Writer) *summary {
	s := &summary{reactions: map[string]int{}, known: map[string]int{}}
	start := time.Now()
	defer func() { s.elapsed = time.Since(start) }()
	tmp, err := os.MkdirTemp("", "controlfuzz-work-")
	if err != nil {
		s.violations = append(s.violations, err.Error())
		return s
	}
	defer os.RemoveAll(tmp)
	opts := execOptions{bounds: defaultBounds, strict: c.strict, tmp: tmp, logger: slog.New(slog.DiscardHandler)}

	if c.replay != "" {
		seq, err := loadRepro(c.replay)
		if err != nil {
			s.violations = append(s.violations, err.Error())
			return s
		}
		printSequence(stdout, seq)
		s.add(c, seq, execute(ctx, seq, opts), stdout)
		return s
	}
	if c.only >= 0 {
		seq := generate(c.seed, uint64(c.only))
		printSequence(stdout, seq)
		s.add(c, seq, execute(ctx, seq, opts), stdout)
		return s
	}
	ctx, cancel := context.WithTimeout(ctx, c.duration)
	defer cancel()
	var next atomic.Uint64
	var wg sync.WaitGroup
	for range max(c.parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if c.maxSeqs > 0 && int64(i) >= c.maxSeqs {
					return
				}
				seq := generate(c.seed, i)
				// A sequence cut by the deadline is not judged.
				o := execute(context.WithoutCancel(ctx), seq, opts)
				s.add(c, seq, o, stdout)
			}
		}()
	}
	wg.Wait()
	return s
}

func (s *summary) print(w io.Writer, c config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	secs := s.elapsed.Seconds()
	fmt.Fprintf(w, "\ncontrolfuzz: seed %d, %v, %d sequences, %d frames (%.0f frames/s), %d marker calls, parallel %d\n",
		c.seed, s.elapsed.Round(time.Millisecond), s.seqs, s.frames, float64(s.frames)/secs, s.calls, c.parallel)
	fmt.Fprintf(w, "distinct reactions (%d):\n", len(s.reactions))
	fuzzkit.PrintCounts(w, s.reactions)
	if len(s.known) > 0 {
		fmt.Fprintln(w, "known deviations from docs/protocol.md (not counted; -strict counts them):")
		fuzzkit.PrintCounts(w, s.known)
	}
	fmt.Fprintf(w, "violations: %d (reproducers in %s)\n", len(s.violations), c.out)
	if len(s.violations) > 0 {
		fmt.Fprintln(w, strings.Join(s.violations, "\n"))
	}
}

// repro is a saved reproducer.
type repro struct {
	Violations []string  `json:"violations"`
	Sequence   *sequence `json:"sequence"`
}

func saveRepro(path string, seq *sequence, violations []string) error {
	b, err := json.MarshalIndent(repro{Violations: violations, Sequence: seq}, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func loadRepro(path string) (*sequence, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	var r repro
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("replay %s: %w", path, err)
	}
	if r.Sequence == nil {
		return nil, fmt.Errorf("replay %s: no sequence", path)
	}
	return r.Sequence, nil
}

func printSequence(w io.Writer, seq *sequence) {
	fmt.Fprintf(w, "sequence seed=%d index=%d, %d steps:\n", seq.Seed, seq.Index, len(seq.Steps))
	for i, st := range seq.Steps {
		fmt.Fprintf(w, "  %3d %-4s %-40s %d bytes fds=%v nowait=%t session=%d\n", i, st.Op, st.Desc, len(st.Frame), st.FDs, st.NoWait, st.Session)
	}
}
