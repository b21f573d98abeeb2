package host

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
)

// report adds median and 99th-percentile metrics of samples to b.
func report(b *testing.B, samples []time.Duration, unit string) {
	b.Helper()
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	scale := map[string]float64{"µs": 1e3, "ms": 1e6}[unit]
	b.ReportMetric(float64(samples[len(samples)/2])/scale, "p50-"+unit)
	b.ReportMetric(float64(samples[len(samples)*99/100])/scale, "p99-"+unit)
}

// BenchmarkSpawnReady: spawn → Ready (Start), the worker being this test binary.
func BenchmarkSpawnReady(b *testing.B) {
	var samples []time.Duration
	for b.Loop() {
		t0 := time.Now()
		h, err := Start(context.Background(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		samples = append(samples, time.Since(t0))
		b.StopTimer()
		h.Close()
		b.StartTimer()
	}
	report(b, samples, "ms")
}

// BenchmarkCreateSession: CreateSession over the control channel, SCM_RIGHTS included.
func BenchmarkCreateSession(b *testing.B) {
	h := startHost(b, Options{})
	var samples []time.Duration
	i := 0
	for b.Loop() {
		i++
		t0 := time.Now()
		s, err := h.CreateSession(context.Background(), SessionSpec{Label: fmt.Sprintf("b%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		samples = append(samples, time.Since(t0))
		b.StopTimer()
		s.Revoke(context.Background())
		b.StartTimer()
	}
	report(b, samples, "µs")
}

// BenchmarkRoundTrip: one no-op call over the session channel, end to end through the
// worker's dispatch point.
func BenchmarkRoundTrip(b *testing.B) {
	h := startHost(b, Options{})
	s := newSession(b, h, "rt")
	ctx := context.Background()
	var samples []time.Duration
	for b.Loop() {
		t0 := time.Now()
		res, err := s.Call(ctx, "noop", nil)
		samples = append(samples, time.Since(t0))
		if err != nil || res.Outcome != Completed {
			b.Fatalf("noop = %+v, %v", res, err)
		}
	}
	report(b, samples, "µs")
}

// BenchmarkClose: Close → worker reaped.
func BenchmarkClose(b *testing.B) {
	var samples []time.Duration
	for b.Loop() {
		b.StopTimer()
		h, err := Start(context.Background(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.CreateSession(context.Background(), SessionSpec{Label: "c"}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		h.Close()
		samples = append(samples, time.Since(t0))
	}
	report(b, samples, "ms")
}

// BenchmarkRevoke: RevokeSession → Revoked (the worker has cancelled the session).
func BenchmarkRevoke(b *testing.B) {
	h := startHost(b, Options{})
	var samples []time.Duration
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		s, err := h.CreateSession(context.Background(), SessionSpec{Label: fmt.Sprintf("r%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		if err := s.Revoke(context.Background()); err != nil {
			b.Fatal(err)
		}
		samples = append(samples, time.Since(t0))
	}
	report(b, samples, "µs")
}

// jsonlRequest and jsonlResponse are the reference system's private-worker framing: one
// JSON object per line on the child's stdin and stdout.
type jsonlRequest struct {
	ProtocolVersion int             `json:"protocol_version"`
	RequestID       uint64          `json:"request_id"`
	Generation      string          `json:"generation"`
	Operation       string          `json:"operation"`
	Name            string          `json:"name,omitempty"`
	Arguments       json.RawMessage `json:"arguments,omitempty"`
}

type jsonlResponse struct {
	ProtocolVersion int             `json:"protocol_version"`
	RequestID       uint64          `json:"request_id"`
	Generation      string          `json:"generation"`
	OK              bool            `json:"ok"`
	Completion      string          `json:"completion"`
	Result          json.RawMessage `json:"result,omitempty"`
}

// runJSONLWorker serves JSON lines on stdin/stdout: the baseline worker.
func runJSONLWorker(in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 32<<20)
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	for sc.Scan() {
		var req jsonlRequest
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			os.Exit(3)
		}
		var args map[string]any
		_ = json.Unmarshal(req.Arguments, &args)
		_ = enc.Encode(jsonlResponse{
			ProtocolVersion: 1, RequestID: req.RequestID, Generation: req.Generation,
			OK: true, Completion: "completed", Result: json.RawMessage(`{"content":[],"isError":false}`),
		})
		w.Flush()
	}
}

// BenchmarkJSONLinesBaseline: the same no-op over JSON lines on a pipe to a child process,
// the framing the reference system's private worker uses.
func BenchmarkJSONLinesBaseline(b *testing.B) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CUA_TEST_ROLE=jsonl")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	rd := bufio.NewReader(stdout)
	enc := json.NewEncoder(stdin)
	var samples []time.Duration
	var id uint64
	for b.Loop() {
		id++
		t0 := time.Now()
		if err := enc.Encode(jsonlRequest{ProtocolVersion: 1, RequestID: id, Generation: "0123456789abcdef0123456789abcdef", Operation: "call", Name: "noop", Arguments: json.RawMessage(`{}`)}); err != nil {
			b.Fatal(err)
		}
		line, err := rd.ReadBytes('\n')
		if err != nil {
			b.Fatal(err)
		}
		var resp jsonlResponse
		if err := json.Unmarshal(line, &resp); err != nil || resp.RequestID != id {
			b.Fatalf("response %q: %v", line, err)
		}
		samples = append(samples, time.Since(t0))
	}
	report(b, samples, "µs")
}

// BenchmarkRoundTripRaw: the same no-op, the caller writing and reading the session
// channel itself (no client reader goroutine): the protocol's floor.
func BenchmarkRoundTripRaw(b *testing.B) {
	h := startHost(b, Options{})
	f, _, err := h.CreateSessionChannel(context.Background(), SessionSpec{Label: "raw"})
	if err != nil {
		b.Fatal(err)
	}
	sc, err := wire.NewSessionConn(f)
	if err != nil {
		b.Fatal(err)
	}
	defer sc.Close()
	var samples []time.Duration
	var id uint64
	for b.Loop() {
		id++
		t0 := time.Now()
		err := sc.Send(&cuav1.Envelope{ProtocolVersion: 1, RequestId: id, Generation: h.generation,
			Body: &cuav1.Envelope_CallTool{CallTool: &cuav1.CallTool{Name: "noop"}}})
		if err != nil {
			b.Fatal(err)
		}
		env, err := sc.Recv()
		if err != nil || env.GetToolResult().GetOutcome() != cuav1.Outcome_OUTCOME_COMPLETED {
			b.Fatal(env, err)
		}
		samples = append(samples, time.Since(t0))
	}
	report(b, samples, "µs")
}

// BenchmarkStopRevokesAll: the indicator's Stop path — RevokeAll with 8 live sessions, each
// with a call in flight that blocks until revoked — until the last session is revoked and
// every in-flight call has its answer.
func BenchmarkStopRevokesAll(b *testing.B) {
	h := startHost(b, Options{})
	var samples []time.Duration
	round := 0
	for b.Loop() {
		b.StopTimer()
		round++
		var sessions []*Session
		for i := range 8 {
			s, err := h.CreateSession(context.Background(), SessionSpec{Label: fmt.Sprintf("stop%d-%d", round, i)})
			if err != nil {
				b.Fatal(err)
			}
			sessions = append(sessions, s)
		}
		done := make(chan struct{}, len(sessions))
		for _, s := range sessions {
			go func() {
				_, _ = s.Call(context.Background(), "sleep", json.RawMessage(`{"ms":10000}`))
				done <- struct{}{}
			}()
		}
		time.Sleep(20 * time.Millisecond) // the calls are in the worker
		b.StartTimer()
		t0 := time.Now()
		if _, err := h.RevokeAll(context.Background()); err != nil {
			b.Fatal(err)
		}
		for range sessions {
			<-done
		}
		samples = append(samples, time.Since(t0))
	}
	report(b, samples, "ms")
}
