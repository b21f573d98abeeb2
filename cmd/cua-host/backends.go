package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/host/display"
)

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
		facts: host.DisplayFacts{Name: d.Name(), Private: true, ServerPID: d.ServerPID(), XAuthority: d.XAuthority()},
		pids:  d.PIDs(),
		close: func() { d.Close() },
	}, nil
}
