package authze2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/host/personui"
)

// dialogs collects the consent dialogs the host shows, as the host's OnShown reports them.
type dialogs struct {
	mu    sync.Mutex
	shown []personui.Shown
	ch    chan personui.Shown
}

func newDialogs() *dialogs { return &dialogs{ch: make(chan personui.Shown, 16)} }

func (d *dialogs) onShown(s personui.Shown) {
	d.mu.Lock()
	d.shown = append(d.shown, s)
	d.mu.Unlock()
	d.ch <- s
}

// next waits for the next dialog to be shown.
func (d *dialogs) next(t testing.TB) personui.Shown {
	t.Helper()
	select {
	case s := <-d.ch:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no consent dialog appeared")
		return personui.Shown{}
	}
}

func button(t testing.TB, s personui.Shown, name string) (x, y int) {
	t.Helper()
	for _, b := range s.Buttons {
		if b.Name == name {
			return b.Rect.Center()
		}
	}
	t.Fatalf("dialog 0x%x has no button %q (%+v)", s.Window, name, s.Buttons)
	return 0, 0
}

// windowExists asks the X server (xwininfo), not the code under test, whether a window is
// still there.
func windowExists(id uint32) bool {
	return exec.Command("xwininfo", "-id", fmt.Sprint(id)).Run() == nil
}

// personClick clicks at root (x, y) with the core pointer, as a person's mouse would.
func personClick(t testing.TB, x, y int) {
	t.Helper()
	xdoMu.Lock()
	defer xdoMu.Unlock()
	if out, err := exec.Command("xdotool", "mousemove", "--sync", fmt.Sprint(x), fmt.Sprint(y), "click", "1").CombinedOutput(); err != nil {
		t.Fatalf("xdotool click: %v: %s", err, out)
	}
}

// TestConsentDialogTheAgentCannotAnswer: a standard session asks to type into the person's
// window; the host shows its dialog on the display. While it is open the agent tries to
// answer it itself — clicking Allow by coordinates, naming the dialog's window, reading its
// accessibility tree, pressing Return and space — and every attempt is refused while the
// dialog stays open and the person's window receives nothing. The person then answers with
// the core pointer: "Allow once" lets exactly that call through, the next call asks again,
// "Deny" and a timeout refuse. The person's clicks are xdotool's: Xvfb has no physical
// input device, so the dialog takes XTEST input there (personui's xtest_only rule), except
// through the sessions' own devices. Oracles: xwininfo for the dialog, the window's own
// event log for the keys.
func TestConsentDialogTheAgentCannotAnswer(t *testing.T) {
	requireDesktop(t)
	user := startApp(t, appB, "dialog-user")
	place(t, user, 40, 500)
	ds := newDialogs()
	h := startSharedHost(t, host.Options{Consent: host.ConsentDialog(host.DialogConsentOptions{
		Display: disp.Name(), XAuthority: disp.XAuthority(), Mode: "standard", Timeout: 20 * time.Second, OnShown: ds.onShown,
	})})
	agent := session(t, h, host.SessionSpec{Label: "dialog-agent", Mode: authz.Standard})
	accomplice := session(t, h, host.SessionSpec{Label: "dialog-accomplice", Mode: authz.Unrestricted})
	into := map[string]any{"text": "secret", "pid": user.PID, "window_id": user.Window}

	ask := func() <-chan host.Result {
		ch := make(chan host.Result, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := agent.Call(ctx, "type_text", jsonArgs(into))
			if err != nil {
				res = host.Result{Outcome: host.Unknown, IsError: true}
				t.Errorf("type_text: %v", err)
			}
			ch <- res
		}()
		return ch
	}

	pending := ask()
	dlg := ds.next(t)
	if !windowExists(dlg.Window) {
		t.Fatalf("xwininfo does not see the dialog 0x%x", dlg.Window)
	}
	out, _ := exec.Command("xprop", "-id", fmt.Sprint(dlg.Window), "_NET_WM_PID", "WM_CLASS").Output()
	if !strings.Contains(string(out), fmt.Sprint(os.Getpid())) {
		t.Errorf("the dialog's _NET_WM_PID is not the host's (%d): %s", os.Getpid(), out)
	}
	ax, ay := button(t, dlg, "allow_once")
	hostPID := os.Getpid()
	for _, s := range []*host.Session{accomplice, agent} {
		for _, c := range []struct {
			tool string
			args map[string]any
			want []authz.Code
		}{
			{"click", map[string]any{"x": ax, "y": ay, "scope": "desktop"}, []authz.Code{authz.CodeProtectedUIDenied}},
			{"mouse_button_down", map[string]any{"x": ax, "y": ay, "scope": "desktop"}, []authz.Code{authz.CodeProtectedUIDenied}},
			{"mouse_button_up", map[string]any{"x": ax, "y": ay, "scope": "desktop"}, []authz.Code{authz.CodeProtectedUIDenied}},
			{"double_click", map[string]any{"x": ax, "y": ay, "scope": "desktop"}, []authz.Code{authz.CodeProtectedUIDenied}},
			{"right_click", map[string]any{"x": ax, "y": ay, "scope": "desktop"}, []authz.Code{authz.CodeProtectedUIDenied}},
			{"move_cursor", map[string]any{"x": ax, "y": ay, "scope": "desktop"}, []authz.Code{authz.CodeProtectedUIDenied}},
			{"scroll", map[string]any{"x": ax, "y": ay, "scope": "desktop", "direction": "down"}, []authz.Code{authz.CodeProtectedUIDenied}},
			{"drag", map[string]any{"from_x": 5, "from_y": 5, "to_x": ax, "to_y": ay, "scope": "desktop"}, []authz.Code{authz.CodeProtectedUIDenied}},
			{"hotkey", map[string]any{"keys": []string{"alt", "a"}, "pid": hostPID, "window_id": dlg.Window}, []authz.Code{authz.CodeSelfTargetDenied}},
			{"zoom", map[string]any{"pid": hostPID, "window_id": dlg.Window, "x1": 0, "y1": 0, "x2": 10, "y2": 10}, []authz.Code{authz.CodeSelfTargetDenied}},
			{"click", map[string]any{"x": 5, "y": 5, "pid": hostPID, "window_id": dlg.Window}, []authz.Code{authz.CodeSelfTargetDenied}},
			{"get_window_state", map[string]any{"pid": hostPID, "window_id": dlg.Window}, []authz.Code{authz.CodeSelfTargetDenied}},
			{"press_key", map[string]any{"key": "Return", "pid": hostPID, "window_id": dlg.Window}, []authz.Code{authz.CodeSelfTargetDenied}},
			{"type_text", map[string]any{"text": " ", "pid": hostPID, "window_id": dlg.Window}, []authz.Code{authz.CodeSelfTargetDenied}},
			{"kill_app", map[string]any{"pid": hostPID}, []authz.Code{authz.CodeSelfTargetDenied}},
		} {
			res := call(t, s, c.tool, c.args)
			if res.Outcome != host.NotStarted || res.Refusal == nil || !containsCode(c.want, res.Refusal.Code) {
				t.Errorf("%s: %s %v = %s %s, want NOT_STARTED %v", s.Label(), c.tool, c.args, res.Outcome, res.Text(), c.want)
			}
		}
	}
	time.Sleep(personui.ArmDelay + 200*time.Millisecond)
	if !windowExists(dlg.Window) {
		t.Fatal("the dialog closed before the person answered")
	}
	select {
	case res := <-pending:
		t.Fatalf("the call finished before the person answered: %s %s", res.Outcome, res.Text())
	default:
	}
	if n := user.count(t, "key_press"); n != 0 {
		t.Fatalf("the person's window logged %d key presses before any answer", n)
	}

	// The person allows this call once.
	personClick(t, ax, ay)
	res := <-pending
	check(t, "type_text after allow once", res, "")
	user.waitCount(t, "key_press", len("secret"))
	if windowExists(dlg.Window) {
		t.Errorf("the dialog is still there after the answer")
	}

	// The next call asks again; the person denies it.
	pending = ask()
	dlg = ds.next(t)
	time.Sleep(personui.ArmDelay + 100*time.Millisecond)
	dx, dy := button(t, dlg, "deny")
	personClick(t, dx, dy)
	check(t, "type_text after deny", <-pending, authz.CodeAuthorizationDeclined)

	userClick(t, user) // the barrier: everything sent before it has been delivered
	user.waitCount(t, "button_press", 1)
	if n := user.count(t, "key_press"); n != len("secret") {
		t.Errorf("the person's window logged %d key presses, want %d (one allowed call)", n, len("secret"))
	}
}

// sendClick sends a ButtonPress and a ButtonRelease of button 1 at root point (x, y) to
// window win with SendEvent, as any client of the display can, from a client of the test's
// own. The timestamp is far in the server's future so that no time gate stops the events:
// only their being sent does.
func sendClick(t testing.TB, win uint32, bounds personui.Rect, x, y int) {
	t.Helper()
	c, err := xgb.NewConnDisplay(disp.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	root := xproto.Setup(c).DefaultScreen(c).Root
	ex, ey := int16(x-bounds.X), int16(y-bounds.Y)
	for _, ev := range []interface{ Bytes() []byte }{
		xproto.ButtonPressEvent{Detail: 1, Time: 0x7fffffff, Root: root, Event: xproto.Window(win), RootX: int16(x), RootY: int16(y), EventX: ex, EventY: ey, SameScreen: true},
		xproto.ButtonReleaseEvent{Detail: 1, Time: 0x7fffffff, Root: root, Event: xproto.Window(win), RootX: int16(x), RootY: int16(y), EventX: ex, EventY: ey, SameScreen: true, State: xproto.KeyButMaskButton1},
	} {
		if err := xproto.SendEventChecked(c, false, xproto.Window(win), 0, string(ev.Bytes())).Check(); err != nil {
			t.Fatalf("SendEvent: %v", err)
		}
	}
}

// TestConsentDialogIgnoresSentEvents: a program sends the dialog a click on "Allow once"
// with SendEvent — its own, and xdotool's click --window — instead of clicking; the dialog
// does not take it, and the call is declined when the question times out. Oracles: the
// call's refusal and the person's window's event log (no key press).
func TestConsentDialogIgnoresSentEvents(t *testing.T) {
	requireDesktop(t)
	user := startApp(t, appB, "dialog-sent-user")
	place(t, user, 40, 500)
	ds := newDialogs()
	h := startSharedHost(t, host.Options{Consent: host.ConsentDialog(host.DialogConsentOptions{
		Display: disp.Name(), XAuthority: disp.XAuthority(), Timeout: 3 * time.Second, OnShown: ds.onShown,
	})})
	s := session(t, h, host.SessionSpec{Label: "dialog-sent", Mode: authz.Standard})
	pending := make(chan host.Result, 1)
	go func() {
		res, err := s.Call(context.Background(), "type_text", jsonArgs(map[string]any{"text": "sent", "pid": user.PID, "window_id": user.Window}))
		if err != nil {
			t.Errorf("type_text: %v", err)
		}
		pending <- res
	}()
	dlg := ds.next(t)
	time.Sleep(personui.ArmDelay + 200*time.Millisecond)
	ax, ay := button(t, dlg, "allow_once")
	sendClick(t, dlg.Window, dlg.Bounds, ax, ay)
	select {
	case res := <-pending:
		t.Fatalf("a click sent with SendEvent answered the dialog: type_text = %s %s", res.Outcome, res.Text())
	case <-time.After(300 * time.Millisecond):
	}
	xdoMu.Lock()
	out, err := exec.Command("xdotool", "mousemove", "--sync", "5", "5", "click", "--window", fmt.Sprint(dlg.Window), "1").CombinedOutput()
	xdoMu.Unlock()
	if err != nil {
		t.Fatalf("xdotool click --window: %v: %s", err, out)
	}
	check(t, "type_text after clicks sent with SendEvent", <-pending, authz.CodeAuthorizationDeclined)
	if n := user.count(t, "key_press"); n != 0 {
		t.Errorf("the person's window logged %d key presses, want 0", n)
	}
}

// TestConsentDialogTimeoutDenies: no answer before the deadline is a refusal, and the
// dialog goes away.
func TestConsentDialogTimeoutDenies(t *testing.T) {
	requireDesktop(t)
	user := startApp(t, appB, "dialog-timeout-user")
	place(t, user, 400, 500)
	ds := newDialogs()
	h := startSharedHost(t, host.Options{Consent: host.ConsentDialog(host.DialogConsentOptions{
		Display: disp.Name(), XAuthority: disp.XAuthority(), Timeout: 1500 * time.Millisecond, OnShown: ds.onShown,
	})})
	s := session(t, h, host.SessionSpec{Label: "dialog-timeout", Mode: authz.Standard})
	res := call(t, s, "type_text", map[string]any{"text": "late", "pid": user.PID, "window_id": user.Window})
	check(t, "type_text without an answer", res, authz.CodeAuthorizationDeclined)
	dlg := <-ds.ch
	if windowExists(dlg.Window) {
		t.Errorf("the dialog 0x%x is still on the display after its timeout", dlg.Window)
	}
	if n := user.count(t, "key_press"); n != 0 {
		t.Errorf("the window logged %d key presses, want 0", n)
	}
}

func containsCode(list []authz.Code, c string) bool {
	for _, v := range list {
		if string(v) == c {
			return true
		}
	}
	return false
}
