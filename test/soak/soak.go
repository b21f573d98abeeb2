package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cua-host/cua-host/host"
)

type options struct {
	duration time.Duration
	sessions int
	interval time.Duration
	noGrowth bool
}

// sample is one reading of both processes.
type sample struct {
	at    time.Duration
	calls int64
	// Worker and host figures.
	wFDs, wGoroutines, wThreads, wRSSKiB int
	hFDs, hGoroutines, hThreads, hRSSKiB int
}

// figure names one column of the series and how much it may grow.
type figure struct {
	name string
	get  func(sample) int
	// rel and abs are the tolerance: last third ≤ first third × (1+rel) + abs.
	rel float64
	abs float64
}

var figures = []figure{
	{"worker fds", func(s sample) int { return s.wFDs }, 0, 3},
	{"worker goroutines", func(s sample) int { return s.wGoroutines }, 0.10, 10},
	{"worker threads", func(s sample) int { return s.wThreads }, 0.25, 4},
	{"worker RSS KiB", func(s sample) int { return s.wRSSKiB }, 0.25, 8 << 10},
	{"host fds", func(s sample) int { return s.hFDs }, 0, 3},
	{"host goroutines", func(s sample) int { return s.hGoroutines }, 0.10, 10},
	{"host threads", func(s sample) int { return s.hThreads }, 0.25, 4},
	{"host RSS KiB", func(s sample) int { return s.hRSSKiB }, 0.25, 8 << 10},
}

// report is the soak's result.
type report struct {
	opts     options
	samples  []sample
	mix      map[string]int
	problems []string
	growth   []string
	calls    int64
	elapsed  time.Duration
}

func (r *report) ok() bool { return len(r.problems) == 0 && len(r.growth) == 0 }

// kind is one kind of call in the mix, with what it must return.
type kind struct {
	name   string
	weight int
}

var mix = []kind{
	{"noop", 25}, {"marker", 20}, {"sleep", 12}, {"cancelled-sleep", 8},
	{"health_report", 10}, {"refused-unknown-tool", 10}, {"refused-bad-args", 10}, {"get_session", 5},
}

func pickKind(r *rand.Rand) string {
	total := 0
	for _, k := range mix {
		total += k.weight
	}
	x := r.IntN(total)
	for _, k := range mix {
		if x < k.weight {
			return k.name
		}
		x -= k.weight
	}
	return mix[0].name
}

func soak(ctx context.Context, o options) (*report, error) {
	rep := &report{opts: o, mix: map[string]int{}}
	dir, err := os.MkdirTemp("", "soak-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	h, err := host.Start(sctx, host.Options{})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	defer h.Close()
	var sessions []*host.Session
	for k := range o.sessions + 1 { // the last one only samples
		s, err := h.CreateSession(ctx, host.SessionSpec{Label: fmt.Sprintf("soak-%d", k)})
		if err != nil {
			return nil, fmt.Errorf("create session %d: %w", k, err)
		}
		sessions = append(sessions, s)
	}
	stats := sessions[o.sessions]
	sessions = sessions[:o.sessions]

	var calls atomic.Int64
	var mu sync.Mutex
	problem := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(rep.problems) < 50 {
			rep.problems = append(rep.problems, fmt.Sprintf(format, args...))
		}
	}
	written := make([]int, len(sessions))
	lctx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	start := time.Now()
	for k, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(k), uint64(start.UnixNano())))
			path := filepath.Join(dir, fmt.Sprintf("markers-%d", k))
			local := map[string]int{}
			defer func() {
				mu.Lock()
				for k, v := range local {
					rep.mix[k] += v
				}
				mu.Unlock()
			}()
			for n := 0; lctx.Err() == nil; n++ {
				kind := pickKind(r)
				local[kind]++
				if msg := callOne(lctx, s, kind, path, fmt.Sprintf("s%d-%d", k, n), r); msg != "" {
					if lctx.Err() != nil {
						return // the load stopped mid-call
					}
					problem("session %d: %s: %s", k, kind, msg)
				} else if kind == "marker" {
					written[k]++
				}
				calls.Add(1)
			}
		}()
	}

	sampleNow := func() {
		s := sample{at: time.Since(start).Round(time.Second), calls: calls.Load()}
		s.wFDs = countFDs(h.PID())
		s.wThreads, s.wRSSKiB = status(h.PID())
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		res, err := stats.Call(cctx, statsTool, nil)
		cancel()
		var st struct {
			Goroutines int `json:"goroutines"`
		}
		if err != nil || res.Outcome != host.Completed || json.Unmarshal(res.Structured, &st) != nil {
			problem("%s: %+v %v", statsTool, res, err)
		}
		s.wGoroutines = st.Goroutines
		s.hFDs = countFDs(os.Getpid())
		s.hGoroutines = runtime.NumGoroutine()
		s.hThreads, s.hRSSKiB = status(os.Getpid())
		rep.samples = append(rep.samples, s)
	}
	tick := time.NewTicker(o.interval)
	end := time.NewTimer(o.duration)
	sampleNow()
loop:
	for {
		select {
		case <-tick.C:
			sampleNow()
		case <-end.C:
			break loop
		case <-ctx.Done():
			break loop
		case <-h.Exited():
			problem("the worker exited during the soak")
			break loop
		}
	}
	tick.Stop()
	sampleNow()
	stopLoad()
	wg.Wait()
	rep.elapsed = time.Since(start)
	rep.calls = calls.Load()
	// Every marker call that reported COMPLETED wrote exactly one line.
	for k := range sessions {
		got := countLines(filepath.Join(dir, fmt.Sprintf("markers-%d", k)))
		if got < written[k] || got > written[k]+1 { // +1: the call cut by the end of the load
			problem("session %d: %d marker lines for %d completed marker calls", k, got, written[k])
		}
	}
	if o.noGrowth {
		rep.growth = checkGrowth(rep.samples)
	}
	return rep, nil
}

// callOne makes one call of the given kind and returns what was wrong with it, or "".
func callOne(ctx context.Context, s *host.Session, kind, path, marker string, r *rand.Rand) string {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var res host.Result
	var err error
	want, wantCode := host.Completed, ""
	switch kind {
	case "noop", "health_report", "get_session":
		res, err = s.Call(cctx, kind, nil)
	case "marker":
		args, _ := json.Marshal(map[string]string{"path": path, "marker": marker})
		res, err = s.Call(cctx, "marker", args)
	case "sleep":
		res, err = s.Call(cctx, "sleep", []byte(fmt.Sprintf(`{"ms":%d}`, 1+r.IntN(20))))
	case "cancelled-sleep":
		c2, cancel2 := context.WithTimeout(cctx, time.Duration(1+r.IntN(5))*time.Millisecond)
		res, err = s.Call(c2, "sleep", []byte(`{"ms":5000}`))
		cancel2()
		if res.Outcome == host.Unknown || res.Outcome == host.NotStarted {
			return ""
		}
		return fmt.Sprintf("cancelled sleep ended %v (%v)", res.Outcome, err)
	case "refused-unknown-tool":
		res, err = s.Call(cctx, "no_such_tool", nil)
		want, wantCode = host.NotStarted, "unclassified_tool"
	case "refused-bad-args":
		res, err = s.Call(cctx, "sleep", []byte(`{"ms":"soon"}`))
		want, wantCode = host.NotStarted, "invalid_arguments"
	}
	code := ""
	if res.Refusal != nil {
		code = res.Refusal.Code
	}
	if res.Outcome != want || code != wantCode || (want == host.Completed && res.IsError) {
		return fmt.Sprintf("got %v %q (is_error %t, err %v), want %v %q", res.Outcome, code, res.IsError, err, want, wantCode)
	}
	return ""
}

// checkGrowth compares the last third of the samples with the first third, after the
// first sample (warm-up).
func checkGrowth(samples []sample) []string {
	if len(samples) < 7 {
		return []string{fmt.Sprintf("only %d samples: too few to judge growth (run longer or sample more often)", len(samples))}
	}
	body := samples[1:]
	third := len(body) / 3
	var out []string
	for _, f := range figures {
		first, last := mean(body[:third], f.get), mean(body[len(body)-third:], f.get)
		limit := first*(1+f.rel) + f.abs
		if last > limit {
			out = append(out, fmt.Sprintf("%s grew: first third %.0f, last third %.0f (limit %.0f)", f.name, first, last, limit))
		}
	}
	return out
}

func mean(ss []sample, get func(sample) int) float64 {
	sum := 0
	for _, s := range ss {
		sum += get(s)
	}
	return float64(sum) / float64(len(ss))
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "soak: %v, %d sessions on one worker, %d calls (%.0f calls/s)\n",
		r.elapsed.Round(time.Second), r.opts.sessions, r.calls, float64(r.calls)/r.elapsed.Seconds())
	keys := make([]string, 0, len(r.mix))
	for k := range r.mix {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Fprint(w, "mix:")
	for _, k := range keys {
		fmt.Fprintf(w, " %s=%d", k, r.mix[k])
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%6s %9s | %6s %6s %7s %9s | %6s %6s %7s %9s\n", "t", "calls", "w.fds", "w.gor", "w.thr", "w.rssKiB", "h.fds", "h.gor", "h.thr", "h.rssKiB")
	for _, s := range r.samples {
		fmt.Fprintf(w, "%6s %9d | %6d %6d %7d %9d | %6d %6d %7d %9d\n", s.at, s.calls, s.wFDs, s.wGoroutines, s.wThreads, s.wRSSKiB, s.hFDs, s.hGoroutines, s.hThreads, s.hRSSKiB)
	}
	if len(r.samples) >= 7 {
		body := r.samples[1:]
		third := len(body) / 3
		fmt.Fprintln(w, "first third → last third (mean):")
		for _, f := range figures {
			fmt.Fprintf(w, "  %-18s %9.0f → %9.0f\n", f.name, mean(body[:third], f.get), mean(body[len(body)-third:], f.get))
		}
	}
	for _, g := range r.growth {
		fmt.Fprintln(w, "GROWTH", g)
	}
	for _, p := range r.problems {
		fmt.Fprintln(w, "PROBLEM", p)
	}
	if r.ok() {
		fmt.Fprintln(w, "soak: flat, every call behaved")
	} else {
		fmt.Fprintf(w, "soak: FAILED (%d growth, %d problems)\n", len(r.growth), len(r.problems))
	}
}

func countFDs(pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	return len(ents)
}

// status reads Threads and VmRSS (KiB) from /proc/PID/status.
func status(pid int) (threads, rssKiB int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1, -1
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "Threads:":
			threads, _ = strconv.Atoi(f[1])
		case "VmRSS:":
			rssKiB, _ = strconv.Atoi(f[1])
		}
	}
	return threads, rssKiB
}

func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte("\n"))
}
