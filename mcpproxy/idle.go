package mcpproxy

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/cua-host/cua-host/client"
)

// idleCaller is a Caller that records when the last request started and finished, so
// that a proxy serving a session endpoint can exit after an idle lifetime (--idle-exit)
// and its host can end the session: the worker only notices an idle session when the
// next call arrives.
type idleCaller struct {
	Caller
	now func() time.Time

	// mu guards the fields below.
	mu       sync.Mutex
	last     time.Time
	inFlight int
}

func newIdleCaller(c Caller, now func() time.Time) *idleCaller {
	return &idleCaller{Caller: c, now: now, last: now()}
}

func (c *idleCaller) begin() {
	c.mu.Lock()
	c.inFlight++
	c.last = c.now()
	c.mu.Unlock()
}

func (c *idleCaller) end() {
	c.mu.Lock()
	c.inFlight--
	c.last = c.now()
	c.mu.Unlock()
}

// ListTools implements Caller.
func (c *idleCaller) ListTools(ctx context.Context) ([]client.ToolInfo, error) {
	c.begin()
	defer c.end()
	return c.Caller.ListTools(ctx)
}

// Call implements Caller.
func (c *idleCaller) Call(ctx context.Context, name string, args json.RawMessage) (client.Result, error) {
	c.begin()
	defer c.end()
	return c.Caller.Call(ctx, name, args)
}

// idleFor returns how long no request has been in flight.
func (c *idleCaller) idleFor() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inFlight > 0 {
		return 0
	}
	return c.now().Sub(c.last)
}

// wait blocks until the caller has been idle for limit (true) or ctx ends (false).
func (c *idleCaller) wait(ctx context.Context, limit time.Duration) bool {
	t := time.NewTimer(limit)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		idle := c.idleFor()
		if idle >= limit {
			return true
		}
		t.Reset(limit - idle)
	}
}
