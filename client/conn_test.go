package client

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeWorker answers envelopes on the far end of a session channel with behave, which
// returns the reply to send (nil: none).
func fakeWorker(t testing.TB, behave func(env *cuav1.Envelope) *cuav1.Envelope) (*Conn, *wire.SessionConn) {
	t.Helper()
	a, b, err := wire.SessionPair()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := wire.NewSessionConn(b)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(a, Options{Generation: make([]byte, 16), Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			env, err := srv.Recv()
			if err != nil {
				return
			}
			if r := behave(env); r != nil {
				r.ProtocolVersion = 1
				if r.RequestId == 0 {
					r.RequestId = env.GetRequestId()
				}
				srv.Send(r)
			}
		}
	}()
	t.Cleanup(func() { c.Close(); srv.Close(); wg.Wait() })
	return c, srv
}

func completed(text string) *cuav1.Envelope {
	return &cuav1.Envelope{Body: &cuav1.Envelope_ToolResult{ToolResult: &cuav1.ToolResult{
		Outcome: cuav1.Outcome_OUTCOME_COMPLETED,
		Content: []*cuav1.Content{{Kind: &cuav1.Content_Text{Text: text}}},
	}}}
}

func TestConcurrentCallsGetTheirOwnReplies(t *testing.T) {
	c, _ := fakeWorker(t, func(env *cuav1.Envelope) *cuav1.Envelope {
		return completed(string(env.GetCallTool().GetArguments()))
	})
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				arg := json.RawMessage(fmt.Sprintf(`{"g":%d,"i":%d}`, g, i))
				res, err := c.Call(context.Background(), "echo", arg)
				if err != nil || res.Outcome != Completed || res.Text() != string(arg) {
					t.Errorf("Call(%s) = %+v, %v", arg, res, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestCancelForwardedAndWorkerWordKept(t *testing.T) {
	var mu sync.Mutex
	var cancelled []uint64
	c, _ := fakeWorker(t, func(env *cuav1.Envelope) *cuav1.Envelope {
		switch b := env.GetBody().(type) {
		case *cuav1.Envelope_CallTool:
			if b.CallTool.GetName() == "never" {
				return nil
			}
			return nil // "slow": answered only when cancelled
		case *cuav1.Envelope_Cancel:
			mu.Lock()
			cancelled = append(cancelled, b.Cancel.GetRequestId())
			mu.Unlock()
			r := &cuav1.Envelope{Body: &cuav1.Envelope_ToolResult{ToolResult: &cuav1.ToolResult{
				Outcome: cuav1.Outcome_OUTCOME_NOT_STARTED, IsError: true,
				Refusal: &cuav1.Refusal{Code: "canceled", Message: "cancelled before dispatch"}}}}
			r.ProtocolVersion = 1
			r.RequestId = b.Cancel.GetRequestId()
			return r
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	res, err := c.Call(ctx, "slow", nil)
	if err != nil || res.Outcome != NotStarted || res.Refusal.Code != "canceled" {
		t.Errorf("cancelled call = %+v, %v; want the worker's NOT_STARTED", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(cancelled) != 1 || cancelled[0] != 1 {
		t.Errorf("cancels = %v, want [1]", cancelled)
	}
}

func TestNoAnswerIsUnknown(t *testing.T) {
	c, _ := fakeWorker(t, func(env *cuav1.Envelope) *cuav1.Envelope { return nil })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	res, err := c.Call(ctx, "x", nil)
	if err == nil || res.Outcome != Unknown {
		t.Errorf("unanswered call = %+v, %v; want UNKNOWN", res, err)
	}
	// The stream is intact after the interrupted read: the next call works once the
	// worker answers again.
}

func TestChannelEndOutcomes(t *testing.T) {
	srvConn := make(chan *wire.SessionConn, 1)
	c, srv := fakeWorker(t, func(env *cuav1.Envelope) *cuav1.Envelope {
		(<-srvConn).Close() // dies after reading the request
		return nil
	})
	srvConn <- srv
	res, err := c.Call(context.Background(), "x", nil)
	if err == nil || res.Outcome != Unknown {
		t.Errorf("call whose worker died after the write = %+v, %v; want UNKNOWN", res, err)
	}
	select {
	case <-c.Done():
	default:
		t.Error("Done not closed after the channel ended")
	}
	res, err = c.Call(context.Background(), "x", nil)
	if err == nil || res.Outcome != NotStarted || res.Refusal.Code != CodeWorkerUnavailable {
		t.Errorf("call after the end = %+v, %v; want NOT_STARTED worker_unavailable", res, err)
	}
	res, _ = c.Call(canceledCtx(), "x", nil)
	if res.Outcome != NotStarted {
		t.Errorf("call with a done context = %+v", res)
	}
}

func canceledCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func TestReplyWithoutOutcomeIsUnknown(t *testing.T) {
	c, _ := fakeWorker(t, func(env *cuav1.Envelope) *cuav1.Envelope {
		return &cuav1.Envelope{Body: &cuav1.Envelope_ToolResult{ToolResult: &cuav1.ToolResult{}}}
	})
	res, err := c.Call(context.Background(), "x", nil)
	if err == nil || res.Outcome != Unknown {
		t.Errorf("reply without outcome = %+v, %v; want UNKNOWN and an error", res, err)
	}
}

// BenchmarkCallScheme compares a lone caller's no-op round trip against an echoing peer
// with the reader role (the caller reads its own reply) and with one reader goroutine.
func BenchmarkCallScheme(b *testing.B) {
	for _, plain := range []bool{false, true} {
		name := "reader_role"
		if plain {
			name = "reader_goroutine"
		}
		b.Run(name, func(b *testing.B) {
			plainReader = plain
			defer func() { plainReader = false }()
			c, _ := fakeWorker(b, func(env *cuav1.Envelope) *cuav1.Envelope { return completed("") })
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if res, err := c.Call(ctx, "noop", nil); err != nil || res.Outcome != Completed {
					b.Fatal(res, err)
				}
			}
		})
	}
}
