package worker

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cua-host/cua-host/client"
	"github.com/cua-host/cua-host/worker/tool"
)

// TestQuickCallDeadline: a quick call runs on the session's reader. When its tool blocks
// past the call's deadline, the deadline still cancels it (cause DeadlineExceeded), the
// caller gets deadline_exceeded, and the reader goes on to read the next call.
func TestQuickCallDeadline(t *testing.T) {
	var calls atomic.Int32
	cause := make(chan error, 1)
	c := inProcess(t, func(reg *tool.Registry) {
		reg.Register(tool.Tool{Name: "noop", Quick: true, Handler: func(ctx context.Context, _ *tool.Call) (*tool.Result, error) {
			if calls.Add(1) > 1 {
				return &tool.Result{}, nil
			}
			select {
			case <-ctx.Done():
				cause <- context.Cause(ctx)
				return nil, ctx.Err()
			case <-time.After(10 * time.Second):
				cause <- nil
				return &tool.Result{}, nil
			}
		}})
	})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := c.Call(ctx, "noop", nil)
	select {
	case got := <-cause:
		if !errors.Is(got, context.DeadlineExceeded) {
			t.Fatalf("blocked quick call ended with cause %v, want %v", got, context.DeadlineExceeded)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a quick call blocked past its deadline was not cancelled")
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("blocked quick call took %v, want about its 200ms deadline", elapsed)
	}
	if err != nil || res.Outcome != client.Unknown || !containsCode(res, client.CodeDeadlineExceeded) {
		t.Errorf("Call(noop) past its deadline = %+v, %v; want outcome unknown with %s", res, err, client.CodeDeadlineExceeded)
	}
	if res, err := c.Call(t.Context(), "noop", nil); err != nil || res.Outcome != client.Completed {
		t.Errorf("Call(noop) after a cancelled quick call = %+v, %v; want completed", res, err)
	}
}

func containsCode(res client.Result, code string) bool {
	if res.Refusal != nil && res.Refusal.Code == code {
		return true
	}
	return len(res.Structured) > 0 && strings.Contains(string(res.Structured), `"error_code":"`+code+`"`)
}
