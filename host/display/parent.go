package display

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/jezek/xgb"

	"github.com/cua-host/cua-host/internal/xauth"
)

var silenceXGB sync.Once

// dialParent connects to the person's display name (":N") with the cookie for it in the
// Xauthority file at xauthFile (empty, or no entry for the display: no cookie, as Xlib does).
// xgb runs its own connection setup and looks for a cookie through XAUTHORITY; the setup
// request it writes is replaced on the wire by one carrying the cookie read here, so this
// process's environment plays no part.
func dialParent(ctx context.Context, name, xauthFile string) (*xgb.Conn, error) {
	num, err := localDisplayNumber(name)
	if err != nil {
		return nil, err
	}
	var cookie []byte
	if xauthFile != "" {
		cookie, _ = xauth.Cookie(xauthFile, num) // none: connect without one
	}
	silenceXGB.Do(func() { xgb.Logger = log.New(io.Discard, "", 0) })
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var d net.Dialer
	path := "/tmp/.X11-unix/X" + strconv.Itoa(num)
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		var err2 error
		if nc, err2 = d.DialContext(ctx, "unix", "@"+path); err2 != nil {
			return nil, fmt.Errorf("connect %s: %w", name, err)
		}
	}
	deadline, _ := ctx.Deadline()
	_ = nc.SetDeadline(deadline)
	x, err := xgb.NewConnNet(&xauth.SetupConn{Conn: nc, Cookie: cookie})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("connect %s: %w", name, err)
	}
	_ = nc.SetDeadline(time.Time{})
	return x, nil
}
