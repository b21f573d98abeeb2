package worker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"golang.org/x/sys/unix"

	"github.com/cua-host/cua-host/internal/credential"
	"github.com/cua-host/cua-host/internal/safefile"
	"github.com/cua-host/cua-host/internal/secretservice"
	"github.com/cua-host/cua-host/proto/contract"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/worker/desktop"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// DesktopRegistry is the Config.NewRegistry of a shipped worker: the X11 desktop tools on
// the display the host named in Hello. Without a usable display the tools are still
// registered and refuse with `unsupported`, so the worker starts and says why. The backend
// and the tools log to log; nil discards.
func DesktopRegistry(ctx context.Context, hello *cuav1.Hello, log *slog.Logger) (*tool.Registry, io.Closer, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	reg := tool.NewRegistry()
	creds, err := credentialStore(hello)
	if err != nil {
		return nil, nil, err
	}
	var opts desktop.Options
	opts.Logger = log
	if creds != nil {
		opts.Credentials = creds
	}
	name := hello.GetDisplay().GetName()
	var b *x11.Backend
	if name == "" {
		err = fmt.Errorf("%w: the host named no X display", x11.ErrNoDisplay)
	} else {
		// On a display the host did not create for this worker, a person's windows are on
		// it too: programs the session launches connect as untrusted X clients. Everywhere
		// they run in the sandbox Hello describes.
		private := hello.GetDisplay().GetPrivate()
		b, err = x11.Open(ctx, x11.Options{Display: name, Logger: log, UntrustedLaunches: !private,
			LaunchWrapper: launchWrapper(hello.GetSandbox(), private, log)})
	}
	if err != nil {
		log.Warn("desktop backend unavailable", "display", name, "err", err)
		opts.Unavailable = err
		desktop.Register(reg, nil, opts)
		return reg, nil, nil
	}
	// A worker that was killed left its sessions' input devices on the display.
	if removed, err := b.RemoveStaleSeats(ctx, processGone); err != nil {
		log.Debug("remove input devices of exited workers", "err", err)
	} else if len(removed) > 0 {
		log.Info("removed input devices exited workers left", "devices", removed)
	}
	desktop.Register(reg, b, opts)
	return reg, b, nil
}

// processGone reports whether no process pid exists.
func processGone(pid int) bool { return unix.Kill(pid, 0) == unix.ESRCH }

// credentialStore is the credential store Hello names, or nil: the person's Secret
// Service limited to the operator's selection (connected to only when a tool asks), or
// the credentials directory the host handed the worker at contract.WorkerCredentialsFD.
// It takes the descriptor over and marks it close-on-exec, so that no launched program
// inherits it. The directory stays open for the worker's life (the returned closer is the
// backend's, which the worker inspects for what it offers); the process's exit closes it.
func credentialStore(hello *cuav1.Hello) (desktop.Credentials, error) {
	if ss := hello.GetCredentials().GetSecretService(); ss != nil {
		if hello.GetCredentials().GetDirectory() {
			return nil, fmt.Errorf("credentials: Hello names both a directory and the Secret Service")
		}
		attrs := map[string]string{}
		for _, a := range ss.GetAttributes() {
			if _, dup := attrs[a.GetName()]; dup {
				return nil, fmt.Errorf("credentials: Hello gives the Secret Service attribute %q twice", a.GetName())
			}
			attrs[a.GetName()] = a.GetValue()
		}
		store, err := secretservice.New(ss.GetBusAddress(), attrs)
		if err != nil {
			return nil, fmt.Errorf("credentials: %w", err)
		}
		return store, nil
	}
	if !hello.GetCredentials().GetDirectory() {
		return nil, nil
	}
	at := contract.WorkerCredentials
	d, err := safefile.FromFile(os.NewFile(uintptr(at.FD), at.Name), at.Name)
	if err != nil {
		return nil, fmt.Errorf("credentials directory at descriptor %d: %w", at.FD, err)
	}
	return credential.NewDir(d), nil
}
