package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/host/display"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/worker/desktop"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// newRegistry builds the worker's tools once Hello has been accepted: the X11 desktop
// backend on the display the host named. Without a usable display the tools are still
// registered and refuse with `unsupported`, so the worker starts and says why.
func newRegistry(ctx context.Context, hello *cuav1.Hello) (*tool.Registry, io.Closer, error) {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	reg := tool.NewRegistry()
	name := hello.GetDisplay().GetName()
	var b *x11.Backend
	var err error
	if name == "" {
		err = fmt.Errorf("%w: the host named no X display", x11.ErrNoDisplay)
	} else {
		b, err = x11.Open(ctx, x11.Options{Display: name, Logger: log})
	}
	if err != nil {
		log.Warn("desktop backend unavailable", "display", name, "err", err)
		desktop.Register(reg, nil, desktop.Options{Logger: log, Unavailable: err})
		return reg, nil, nil
	}
	desktop.Register(reg, b, desktop.Options{Logger: log})
	return reg, b, nil
}

// startPrivateDisplay starts a private X display (Xvfb with a fresh cookie, openbox, and
// a private D-Bus session bus) for this command; Close tears it down.
func startPrivateDisplay(ctx context.Context, log *slog.Logger) (*displaySetup, error) {
	d, err := display.Start(ctx, display.Options{Logger: log, WindowManager: true, SessionBus: true})
	if err != nil {
		return nil, fmt.Errorf("private display: %w", err)
	}
	log.Info("private display started", "display", d.Name(), "server_pid", d.ServerPID())
	return &displaySetup{
		env:   d.Env(),
		facts: host.DisplayFacts{Name: d.Name(), Private: true, ServerPID: d.ServerPID()},
		pids:  d.PIDs(),
		close: func() { d.Close() },
	}, nil
}
