package worker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestQuickCtx: a quick call's context reports its deadline, is not cancelled before it
// unless the session ends, and once past it says so through Err, Done and context.Cause
// alike, whether or not anything asked for Done before.
func TestQuickCtx(t *testing.T) {
	errEnded := errors.New("session ended")
	t.Run("past the deadline without Done", func(t *testing.T) {
		c := newQuickCtx(context.Background(), time.Now().Add(20*time.Millisecond), time.Now)
		defer c.release()
		if err := c.Err(); err != nil {
			t.Fatalf("Err before the deadline = %v", err)
		}
		time.Sleep(40 * time.Millisecond)
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Err after the deadline = %v, want %v", err, context.DeadlineExceeded)
		}
		if cause := context.Cause(c); !errors.Is(cause, context.DeadlineExceeded) {
			t.Errorf("Cause after the deadline = %v, want %v", cause, context.DeadlineExceeded)
		}
		select {
		case <-c.Done():
		default:
			t.Error("Done is open after the deadline")
		}
	})
	t.Run("a waiting handler is cancelled at the deadline", func(t *testing.T) {
		at := time.Now().Add(30 * time.Millisecond)
		c := newQuickCtx(context.Background(), at, time.Now)
		defer c.release()
		if d, ok := c.Deadline(); !ok || !d.Equal(at) {
			t.Errorf("Deadline = %v, %v, want %v", d, ok, at)
		}
		select {
		case <-c.Done():
			if early := time.Until(at); early > 5*time.Millisecond {
				t.Errorf("cancelled %v before the deadline", early)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Done did not close at the deadline")
		}
		if cause := context.Cause(c); !errors.Is(cause, context.DeadlineExceeded) {
			t.Errorf("Cause = %v, want %v", cause, context.DeadlineExceeded)
		}
	})
	for _, waited := range []bool{false, true} {
		t.Run(fmt.Sprintf("the session ends, Done asked %v", waited), func(t *testing.T) {
			session, end := context.WithCancelCause(context.Background())
			c := newQuickCtx(session, time.Now().Add(time.Hour), time.Now)
			defer c.release()
			var done <-chan struct{}
			if waited {
				done = c.Done()
			}
			end(errEnded)
			if waited {
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					t.Fatal("Done did not close when the session ended")
				}
			}
			if err := c.Err(); !errors.Is(err, context.Canceled) {
				t.Errorf("Err = %v, want %v", err, context.Canceled)
			}
			if cause := context.Cause(c); !errors.Is(cause, errEnded) {
				t.Errorf("Cause = %v, want the session's %v", cause, errEnded)
			}
		})
	}
	t.Run("values come from the session", func(t *testing.T) {
		type key struct{}
		c := newQuickCtx(context.WithValue(context.Background(), key{}, "v"), time.Now().Add(time.Hour), time.Now)
		defer c.release()
		if c.Value(key{}) != "v" {
			t.Error("Value before Done lost the session's value")
		}
		c.Done()
		if c.Value(key{}) != "v" {
			t.Error("Value after Done lost the session's value")
		}
	})
}
