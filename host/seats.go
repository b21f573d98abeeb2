package host

import (
	"context"
	"time"

	"github.com/cua-host/cua-host/host/personui"
)

// seatCleanupTimeout bounds the host's removal of a dead worker's input devices.
const seatCleanupTimeout = 3 * time.Second

// removeSeatsAfterExit waits for the worker to exit, then removes the XInput2 master pairs
// it created for its sessions and left on the display: a worker removes them itself when a
// session ends or it exits, but not when it is killed, and a pair outlives the connection
// that made it.
func (h *Host) removeSeatsAfterExit() {
	defer close(h.seatsDone)
	<-h.proc.exited
	d := h.opts.Display
	if d.Name == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), seatCleanupTimeout)
	defer cancel()
	removed, err := personui.RemoveInputDevicesOf(ctx, personui.Options{Display: d.Name, XAuthority: d.XAuthority}, h.proc.pid)
	switch {
	case err != nil:
		h.log.Debug("remove the exited worker's input devices", "pid", h.proc.pid, "display", d.Name, "err", err)
	case len(removed) > 0:
		h.log.Info("removed input devices an exited worker left", "pid", h.proc.pid, "devices", removed)
	}
}
