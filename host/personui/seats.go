package personui

import (
	"context"

	"github.com/cua-host/cua-host/internal/xinput2"
)

// RemoveInputDevicesOf removes, on opts.Display, the XInput2 master pairs that process pid
// created for its sessions (named by xinput2.SeatName) and returns their pointers' names.
// The host calls it once a worker has exited: a pair outlives the connection that made it.
func RemoveInputDevicesOf(ctx context.Context, opts Options, pid int) ([]string, error) {
	c, err := dial(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer c.x.Close()
	if err := xinput2.Init(c.x); err != nil {
		return nil, err
	}
	return xinput2.RemoveSeats(c.x, func(p int) bool { return p == pid })
}
