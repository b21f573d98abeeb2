package personui

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/internal/xauth"
	"github.com/cua-host/cua-host/internal/xinput2"
)

// handshakeTimeout bounds connecting and the X setup exchange when ctx has no earlier
// deadline: a wedged server must not hold a consent request forever.
const handshakeTimeout = 5 * time.Second

var silenceXGB sync.Once

// conn is one X connection with the screen it draws on.
type conn struct {
	x      *xgb.Conn
	nc     net.Conn           // the socket under x; closing it ends every pending reply
	ev     *xinput2.EventConn // between nc and x: holds the generic (XI2) events
	screen *xproto.ScreenInfo
}

// keepSent says which events sent by another client (SendEvent) still reach the windows:
// ClientMessage, since the window manager's WM_DELETE_WINDOW always comes that way (any
// client can forge one, and it only closes the window: a Deny), and ConfigureNotify, which
// ICCCM window managers send when they move a window (it only makes the window read its
// position from the server again, and disarm if it moved). Every other sent event — a
// forged button press, visibility or property notification — is dropped before it is read.
func keepSent(code byte) bool {
	return code == xproto.ClientMessage || code == xproto.ConfigureNotify
}

// dial connects to opts.Display with the cookie from opts.XAuthority. xgb always runs its
// own connection setup and looks for a cookie through XAUTHORITY; the setup request it writes
// is replaced on the wire by one carrying the cookie read here, so what xgb found (if
// anything) is never sent.
//
// Like Xlib, it sends no cookie when there is none to send — no Xauthority file named, a
// file that cannot be read, or one without an entry for the display — which is what a server
// without access control (started without -auth) expects; when the server then refuses the
// connection the error says why no cookie was sent.
func dial(ctx context.Context, opts Options) (_ *conn, err error) {
	num, scr, err := parseDisplay(opts.Display)
	if err != nil {
		return nil, err
	}
	cookie, noCookie := cookieFor(opts.XAuthority, num)
	silenceXGB.Do(func() { xgb.Logger = log.New(io.Discard, "", 0) })

	ctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	var d net.Dialer
	path := "/tmp/.X11-unix/X" + strconv.Itoa(num)
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		// Servers started with -nolisten unix-path may listen on the abstract name only.
		var err2 error
		if nc, err2 = d.DialContext(ctx, "unix", "@"+path); err2 != nil {
			return nil, fmt.Errorf("%w: connect %s: %w", ErrDisplay, opts.Display, err)
		}
	}
	deadline, _ := ctx.Deadline()
	_ = nc.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	ec := xinput2.NewEventConn(nc, keepSent)
	sc := &xauth.SetupConn{Conn: ec, Cookie: cookie}
	x, err := xgb.NewConnNet(sc)
	stopped := stop()
	if err != nil {
		nc.Close()
		if noCookie != "" && strings.Contains(err.Error(), "authentication refused") {
			return nil, fmt.Errorf("%w: connect %s: %w (no cookie was sent: %s)", ErrDisplay, opts.Display, err, noCookie)
		}
		return nil, fmt.Errorf("%w: connect %s: %w", ErrDisplay, opts.Display, err)
	}
	if !stopped || ctx.Err() != nil {
		x.Close()
		return nil, fmt.Errorf("%w: connect %s: %w", ErrDisplay, opts.Display, ctx.Err())
	}
	_ = nc.SetDeadline(time.Time{})
	setup := xproto.Setup(x)
	if scr >= len(setup.Roots) {
		x.Close()
		return nil, fmt.Errorf("%w: %s has no screen %d", ErrDisplay, opts.Display, scr)
	}
	return &conn{x: x, nc: nc, ev: ec, screen: &setup.Roots[scr]}, nil
}

// parseDisplay accepts ":N", ":N.S", "unix:N" and "unix:N.S".
func parseDisplay(name string) (num, screen int, err error) {
	rest, ok := strings.CutPrefix(name, ":")
	if !ok {
		rest, ok = strings.CutPrefix(name, "unix:")
	}
	if !ok {
		return 0, 0, fmt.Errorf("%w: display %q: only local displays (\":N\") are supported", ErrDisplay, name)
	}
	n, s, hasScreen := strings.Cut(rest, ".")
	num, err = strconv.Atoi(n)
	if err != nil || num < 0 {
		return 0, 0, fmt.Errorf("%w: display %q: bad display number", ErrDisplay, name)
	}
	if hasScreen {
		if screen, err = strconv.Atoi(s); err != nil || screen < 0 {
			return 0, 0, fmt.Errorf("%w: display %q: bad screen number", ErrDisplay, name)
		}
	}
	return num, screen, nil
}

// cookieFor returns the cookie to send to local display num from the Xauthority file at
// path, or, when there is none to send, says why (Xlib's rule: no file, an unreadable file or
// no entry for the display means connecting without a cookie).
func cookieFor(path string, num int) (cookie []byte, none string) {
	if path == "" {
		return nil, "no Xauthority file was given"
	}
	cookie, err := readCookie(path, num)
	if err != nil {
		return nil, strings.TrimPrefix(err.Error(), ErrDisplay.Error()+": ")
	}
	return cookie, ""
}

// readCookie finds the MIT-MAGIC-COOKIE-1 for local display num in the Xauthority file at
// path (internal/xauth), as an ErrDisplay.
func readCookie(path string, num int) ([]byte, error) {
	c, err := xauth.Cookie(path, num)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDisplay, err)
	}
	return c, nil
}
