package e2e

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/internal/xauth"
)

// focusWitness counts the times the person's keyboard focus left their terminal, as the X
// server tells a connection of the test's own that selected FocusChange on the terminal's
// window. It is the oracle for what a call's result says of the person's focus: a window
// manager that moves the focus and a give-back 1 ms later are both seen, where a poll
// would miss them.
type focusWitness struct {
	conn *xgb.Conn
	mu   sync.Mutex
	left int // FocusOut events that took the focus out of the window
}

// watchPersonFocus starts the witness on display (":N", with the cookie in xauthority)
// for window win (decimal, as xdotool writes it). It ends with the test.
func watchPersonFocus(t testing.TB, display, xauthority, win string) *focusWitness {
	t.Helper()
	num, err := strconv.Atoi(strings.TrimPrefix(display, ":"))
	if err != nil {
		t.Fatalf("display %q: %v", display, err)
	}
	id, err := strconv.ParseUint(win, 10, 32)
	if err != nil {
		t.Fatalf("window %q: %v", win, err)
	}
	nc, err := net.Dial("unix", "/tmp/.X11-unix/X"+strconv.Itoa(num))
	if err != nil {
		t.Fatal(err)
	}
	cookie, _ := xauth.Cookie(xauthority, num)
	conn, err := xgb.NewConnNet(&xauth.SetupConn{Conn: nc, Cookie: cookie})
	if err != nil {
		nc.Close()
		t.Fatalf("the focus witness's connection: %v", err)
	}
	w := &focusWitness{conn: conn}
	if err := xproto.ChangeWindowAttributesChecked(conn, xproto.Window(id), xproto.CwEventMask,
		[]uint32{xproto.EventMaskFocusChange}).Check(); err != nil {
		conn.Close()
		t.Fatalf("select the focus events of window %s: %v", win, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, xe := conn.WaitForEvent()
			if ev == nil && xe == nil {
				return
			}
			if out, ok := ev.(xproto.FocusOutEvent); ok && leftWindow(out) {
				w.mu.Lock()
				w.left++
				w.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { conn.Close(); <-done })
	return w
}

// leftWindow reports whether e took the keyboard focus out of the window: not a grab's
// pseudo-move, nor a move to a window inside it, nor the pointer's part of a PointerRoot
// focus.
func leftWindow(e xproto.FocusOutEvent) bool {
	if e.Mode != xproto.NotifyModeNormal && e.Mode != xproto.NotifyModeWhileGrabbed {
		return false
	}
	switch e.Detail {
	case xproto.NotifyDetailAncestor, xproto.NotifyDetailVirtual, xproto.NotifyDetailNonlinear, xproto.NotifyDetailNonlinearVirtual:
		return true
	}
	return false
}

// count returns how many times the focus has left the window, counting every event the
// server sent before it answers a question asked now.
func (w *focusWitness) count(t testing.TB) int {
	t.Helper()
	if _, err := xproto.GetInputFocus(w.conn).Reply(); err != nil {
		t.Fatalf("the focus witness: %v", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.left
}

// focusAccount compares what a call's result says of the person's focus (its details'
// person_focus) with the witness: left is how many times the focus left the person's
// window during the call. It returns "" when they agree or the result says nothing, and
// wrong is true when the result says the focus was kept while it left.
func focusAccount(c compatCall, left int) (mismatch string, wrong bool) {
	said, ok := c.Evidence["person_focus"].(string)
	if !ok {
		if left > 0 {
			return fmt.Sprintf("the focus left the person's window %d time(s); the result says nothing of it", left), false
		}
		return "", false
	}
	switch {
	case left > 0 && said == "kept":
		return fmt.Sprintf("the focus left the person's window %d time(s) during the call; the result says %q", left, said), true
	case left == 0 && said != "kept" && !strings.HasPrefix(said, "not read back"):
		return fmt.Sprintf("the result says %q; the witness saw the focus stay", said), false
	}
	return "", false
}
