package worker

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/cua-host/cua-host/authz"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/worker/tool"
)

// Config configures a worker.
type Config struct {
	// Logger receives the worker's logs; nil discards them.
	Logger *slog.Logger
	// NewRegistry builds the tool registry once Hello has been accepted and before Ready
	// is sent; it may open backends (the X display named in hello.Display). The returned
	// closer, if any, is closed when the worker stops; when it also implements Desktop
	// (*x11.Backend does), the authorizer resolves window targets through it, and without
	// one every call that names a window is refused. log is Logger, for the backends and
	// tools to log to. Nil means an empty registry.
	NewRegistry func(ctx context.Context, hello *cuav1.Hello, log *slog.Logger) (*tool.Registry, io.Closer, error)
	// ExtraInventory classifies tools that only this worker registers, on top of the
	// shipped inventory (authz.DefaultInventory). test/testworker uses it for its
	// test-only tools; shipped workers leave it nil, so an unreviewed tool is refused with
	// unclassified_tool.
	ExtraInventory []authz.Entry
	// HelloTimeout bounds the wait for Hello; zero means 10 s.
	HelloTimeout time.Duration
	// DefaultDeadline applies to calls whose envelope carries none; zero means 120 s.
	DefaultDeadline time.Duration
	// MaxInFlight bounds concurrent calls per session; zero means 32.
	MaxInFlight int
	// DrainTimeout bounds how long stopping waits for in-flight handlers after cancelling
	// them; zero means 100 ms.
	DrainTimeout time.Duration
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.HelloTimeout == 0 {
		c.HelloTimeout = 10 * time.Second
	}
	if c.DefaultDeadline == 0 {
		c.DefaultDeadline = 120 * time.Second
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = 32
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = 100 * time.Millisecond
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}
