package authze2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/x11"
)

// Input lands only where it was authorized: a window of another client on top of the
// session's own window, or another client's keyboard grab, refuses the input before
// anything is sent. The oracles are the event logs of the windows involved.

var (
	xclientOnce sync.Once
	xclientPath string
	xclientErr  error
)

// xclient builds the test client that maps override-redirect windows, grabs the keyboard
// or refuses the focus (test/xclient), once, next to the xevlog copies in the directory
// TestMain removes at the end.
func xclient(t testing.TB) string {
	t.Helper()
	requireDesktop(t)
	xclientOnce.Do(func() {
		xclientPath = filepath.Join(filepath.Dir(filepath.Dir(appA)), "xclient", "xclient")
		out, err := exec.Command("go", "build", "-o", xclientPath, "github.com/cua-host/cua-host/test/xclient").CombinedOutput()
		if err != nil {
			xclientErr = fmt.Errorf("build xclient: %v: %s", err, out)
		}
	})
	if xclientErr != nil {
		t.Fatal(xclientErr)
	}
	return xclientPath
}

// foreignClient runs xclient as the user would (a child of the test, not of any session)
// and waits for its window. Lines written to the returned writer reach its stdin.
func foreignClient(t testing.TB, title string, args ...string) (*app, io.Writer) {
	t.Helper()
	a := &app{log: filepath.Join(t.TempDir(), title+".jsonl")}
	cmd := exec.Command(xclient(t), append([]string{"-title", title, "-out", a.log}, args...)...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	a.PID = cmd.Process.Pid
	a.waitReady(t)
	return a, in
}

// launchClient has session s launch xclient with args; its window is the session's own.
func launchClient(t testing.TB, s *host.Session, title string, args ...string) *app {
	t.Helper()
	log := filepath.Join(t.TempDir(), title+".jsonl")
	return launchDeclared(t, s, title, log, append([]string{xclient(t), "-title", title, "-out", log}, args...), map[string]any{"timeout_ms": 0})
}

// userDesk is the user's own connection to the display: it places windows exactly.
func userDesk(t testing.TB) *x11.Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := x11.Open(ctx, x11.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// frameAt moves window id's client area to x,y (keeping its size) and returns it.
func frameAt(t testing.TB, b *x11.Backend, id uint32, x, y int) x11.Rect {
	t.Helper()
	w, err := b.Window(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := b.SetFrame(context.Background(), id, x11.Rect{X: x, Y: y, Width: w.Frame.Width, Height: w.Frame.Height})
	if err != nil || got.X != x || got.Y != y {
		t.Fatalf("SetFrame(0x%x) = %+v, %v, want at (%d,%d)", id, got, err, x, y)
	}
	return got
}

// buttons counts a log's button presses and releases.
func buttons(t testing.TB, a *app) int {
	return a.count(t, "button_press") + a.count(t, "button_release")
}

// refused asserts that the call was refused with code and that its message names what.
func refused(t testing.TB, what string, res host.Result, code authz.Code, names string) {
	t.Helper()
	if check(t, what, res, code) && names != "" && !strings.Contains(res.Refusal.Message, names) {
		t.Errorf("%s: message %q does not name %s", what, res.Refusal.Message, names)
	}
}

// The layout of the covering tests, client areas in root coordinates: the session's own
// window (300×200) at (100,100); the covering window from (250,200), over the own window's
// window-relative x 150–299, y 100–199 (and, for a managed window, its title bar above).
const ownX, ownY, coverX, coverY = 100, 100, 250, 200

// coveredPoint and clearPoint are window-relative points of the own window.
var (
	coveredPoint = map[string]any{"x": 200, "y": 150}
	clearPoint   = map[string]any{"x": 50, "y": 50}
)

func at(a *app, pt map[string]any, extra map[string]any) map[string]any {
	out := map[string]any{"pid": a.PID, "window_id": a.Window}
	for k, v := range pt {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// TestCoveredPointerInput: a foreign window kept above part of the session's own window.
// Pointer input at the covered part — click, double_click, right_click, scroll, a drag
// whose path crosses it, mouse_button_down, move_cursor — is refused with target_covered
// and NOT_STARTED, and the foreign window receives no button event; the same input on
// the uncovered part still lands in the own window.
func TestCoveredPointerInput(t *testing.T) {
	requireDesktop(t)
	user := userDesk(t)
	h := startHost(t, host.Options{})
	s := session(t, h, host.SessionSpec{Label: "covered"})
	own := launchApp(t, s, appA, "own-covered")
	frameAt(t, user, own.Window, ownX, ownY)
	foreign := startApp(t, appB, "foreign-above")
	frameAt(t, user, foreign.Window, coverX, coverY)
	if out, err := exec.Command("wmctrl", "-i", "-r", fmt.Sprint(foreign.Window), "-b", "add,above").CombinedOutput(); err != nil {
		t.Fatalf("wmctrl: %v: %s", err, out)
	}
	// The own window gets the focus and the top of its layer; the foreign one stays above.
	check(t, "bring_to_front", call(t, s, "bring_to_front", map[string]any{"pid": own.PID, "window_id": own.Window}), "")
	names := fmt.Sprintf("0x%x (pid %d)", foreign.Window, foreign.PID)

	t.Run("covered part", func(t *testing.T) {
		foreignBefore, ownBefore := buttons(t, foreign), buttons(t, own)
		refused(t, "click", call(t, s, "click", at(own, coveredPoint, nil)), authz.CodeTargetCovered, names)
		refused(t, "double_click", call(t, s, "double_click", at(own, coveredPoint, nil)), authz.CodeTargetCovered, names)
		refused(t, "right_click", call(t, s, "right_click", at(own, coveredPoint, nil)), authz.CodeTargetCovered, names)
		refused(t, "scroll", call(t, s, "scroll", at(own, coveredPoint, map[string]any{"direction": "down"})), authz.CodeTargetCovered, names)
		refused(t, "mouse_button_down", call(t, s, "mouse_button_down", at(own, coveredPoint, nil)), authz.CodeTargetCovered, names)
		refused(t, "move_cursor", call(t, s, "move_cursor", at(own, coveredPoint, nil)), authz.CodeTargetCovered, names)
		// Both ends are uncovered; the straight path between them crosses the covered part.
		drag := map[string]any{"pid": own.PID, "window_id": own.Window, "from_x": 20, "from_y": 190, "to_x": 290, "to_y": 20, "duration_ms": 0}
		refused(t, "drag across", call(t, s, "drag", drag), authz.CodeTargetCovered, names)
		// The decoration of the foreign window covers the own window too.
		refused(t, "click under the title bar", call(t, s, "click", at(own, map[string]any{"x": 250, "y": 95}, nil)), authz.CodeTargetCovered, "")

		userClick(t, foreign) // the oracle's barrier
		foreign.waitCount(t, "button_press", 1)
		if got := buttons(t, foreign) - foreignBefore; got != 2 {
			t.Errorf("the foreign window logged %d button events, want only the barrier's press and release", got)
		}
		if got := buttons(t, own) - ownBefore; got != 0 {
			t.Errorf("the own window logged %d button events from refused calls", got)
		}
	})

	t.Run("uncovered part", func(t *testing.T) {
		check(t, "bring_to_front", call(t, s, "bring_to_front", map[string]any{"pid": own.PID, "window_id": own.Window}), "")
		foreignBefore := buttons(t, foreign)
		press := own.count(t, "button_press")
		check(t, "click", call(t, s, "click", at(own, clearPoint, nil)), "")
		check(t, "double_click", call(t, s, "double_click", at(own, clearPoint, nil)), "")
		check(t, "right_click", call(t, s, "right_click", at(own, clearPoint, nil)), "")
		check(t, "scroll", call(t, s, "scroll", at(own, clearPoint, map[string]any{"direction": "down", "amount": 2})), "")
		check(t, "drag", call(t, s, "drag", map[string]any{"pid": own.PID, "window_id": own.Window, "from_x": 20, "from_y": 20, "to_x": 120, "to_y": 60, "duration_ms": 0}), "")
		check(t, "mouse_button_down", call(t, s, "mouse_button_down", at(own, map[string]any{"x": 40, "y": 40}, nil)), "")
		check(t, "mouse_button_up", call(t, s, "mouse_button_up", at(own, map[string]any{"x": 80, "y": 40}, nil)), "")
		check(t, "move_cursor", call(t, s, "move_cursor", at(own, map[string]any{"x": 30, "y": 30}, nil)), "")
		// 1 + 2 + 1 + 2 + 1 + 1 presses.
		own.waitCount(t, "button_press", press+8)
		for _, e := range own.events(t) {
			if e.Type == "button_press" && (e.X >= 150 && e.Y >= 80) {
				t.Errorf("own window pressed at (%d,%d), in the covered part", e.X, e.Y)
			}
		}
		if got := buttons(t, foreign) - foreignBefore; got != 0 {
			t.Errorf("the foreign window logged %d button events from input on the uncovered part", got)
		}
	})
}

// TestOverrideRedirectCover: an override-redirect window of another client (a popup the
// window manager does not manage) over part of the own window refuses pointer input there;
// an override-redirect window of a process the session launched (its own menu) does not.
func TestOverrideRedirectCover(t *testing.T) {
	requireDesktop(t)
	user := userDesk(t)
	h := startHost(t, host.Options{})
	s := session(t, h, host.SessionSpec{Label: "override"})
	own := launchApp(t, s, appA, "own-override")
	frameAt(t, user, own.Window, ownX, ownY)
	check(t, "bring_to_front", call(t, s, "bring_to_front", map[string]any{"pid": own.PID, "window_id": own.Window}), "")
	popup, _ := foreignClient(t, "foreign-popup", "-override-redirect", "-x", fmt.Sprint(coverX), "-y", fmt.Sprint(coverY), "-width", "150", "-height", "100")

	names := fmt.Sprintf("0x%x (pid %d, override-redirect)", popup.Window, popup.PID)
	refused(t, "click under a foreign popup", call(t, s, "click", at(own, coveredPoint, nil)), authz.CodeTargetCovered, names)
	refused(t, "scroll under a foreign popup", call(t, s, "scroll", at(own, coveredPoint, map[string]any{"direction": "up"})), authz.CodeTargetCovered, names)
	check(t, "click beside it", call(t, s, "click", at(own, clearPoint, nil)), "")
	own.waitCount(t, "button_press", 1)
	if n := buttons(t, popup); n != 0 {
		t.Errorf("the foreign popup logged %d button events", n)
	}

	// The session's own popup: a window of a process it launched.
	menu := launchClient(t, s, "own-menu", "-override-redirect", "-x", "120", "-y", "120", "-width", "60", "-height", "40")
	check(t, "click in the own popup", call(t, s, "click", at(own, map[string]any{"x": 40, "y": 40}, nil)), "")
	menu.waitCount(t, "button_press", 1)
}

// TestKeyboardGrabRefusesKeys: while another client holds a keyboard grab (the grab a
// password prompt takes), type_text, press_key and hotkey into the session's own window
// are refused with input_busy and NOT_STARTED, and the grabbing client receives no key;
// once the grab is released typing works again. A grab by a process the session launched
// (its own menu) refuses keys too: click and element actions are the way into a menu.
func TestKeyboardGrabRefusesKeys(t *testing.T) {
	requireDesktop(t)
	user := userDesk(t)
	h := startHost(t, host.Options{})
	s := session(t, h, host.SessionSpec{Label: "grab"})
	own := launchApp(t, s, appA, "own-grab")
	frameAt(t, user, own.Window, ownX, ownY)
	prompt, stdin := foreignClient(t, "password-prompt", "-grab-keyboard", "-x", "600", "-y", "400")
	prompt.waitCount(t, "grabbed", 1)

	target := map[string]any{"pid": own.PID, "window_id": own.Window}
	with := func(k string, v any) map[string]any {
		out := map[string]any{k: v}
		for k, v := range target {
			out[k] = v
		}
		return out
	}
	refused(t, "type_text", call(t, s, "type_text", with("text", "secret")), authz.CodeInputBusy, "keyboard grab")
	refused(t, "press_key", call(t, s, "press_key", with("key", "Return")), authz.CodeInputBusy, "")
	refused(t, "hotkey", call(t, s, "hotkey", with("keys", []string{"ctrl", "u"})), authz.CodeInputBusy, "")
	if n := prompt.count(t, "key_press") + own.count(t, "key_press"); n != 0 {
		t.Errorf("refused calls delivered %d key presses", n)
	}

	if _, err := io.WriteString(stdin, "ungrab\n"); err != nil {
		t.Fatal(err)
	}
	prompt.waitCount(t, "ungrabbed", 1)
	check(t, "type_text after the grab", call(t, s, "type_text", with("text", "ok")), "")
	own.waitCount(t, "key_press", 2)
	if n := prompt.count(t, "key_press"); n != 0 {
		t.Errorf("the grabbing client logged %d key presses", n)
	}

	t.Run("own grab", func(t *testing.T) {
		menu := launchClient(t, s, "own-grab", "-grab-keyboard", "-x", "600", "-y", "100")
		menu.waitCount(t, "grabbed", 1)
		refused(t, "type_text under the session's own grab", call(t, s, "type_text", with("text", "x")), authz.CodeInputBusy, "click")
	})
}

// TestFailedActivationRefusesKeys: a window that refuses the input focus (WM_HINTS input
// False) cannot be activated; keys for it are refused with activation_failed and
// NOT_STARTED instead of reported as typed, and nothing is sent.
func TestFailedActivationRefusesKeys(t *testing.T) {
	requireDesktop(t)
	h := startHost(t, host.Options{})
	s := session(t, h, host.SessionSpec{Label: "activation"})
	other := launchApp(t, s, appA, "own-other")
	check(t, "bring_to_front", call(t, s, "bring_to_front", map[string]any{"pid": other.PID, "window_id": other.Window}), "")
	nofocus := launchClient(t, s, "no-focus", "-no-focus", "-x", "600", "-y", "300")
	// With the focus at PointerRoot (left there when an earlier test's focused window went
	// away), keys go to the window under the pointer: keep the pointer off this one.
	xdoMu.Lock()
	out, err := exec.Command("xdotool", "mousemove", "1270", "790").CombinedOutput()
	xdoMu.Unlock()
	if err != nil {
		t.Fatalf("xdotool mousemove: %v: %s", err, out)
	}
	target := map[string]any{"pid": nofocus.PID, "window_id": nofocus.Window}
	args := map[string]any{"text": "lost"}
	for k, v := range target {
		args[k] = v
	}
	res := call(t, s, "type_text", args)
	// What must never happen is keys reported as typed that went elsewhere. A window manager
	// may still hand such a window the focus (the server then delivers to it): then the keys
	// are the target's and the call completes; otherwise it is refused with nothing sent.
	landed := 0
	if res.Outcome == host.Completed && !res.IsError {
		landed = len("lost")
		nofocus.waitCount(t, "key_press", landed)
		t.Logf("the window manager gave the no-focus window the focus; the keys went to it")
	} else {
		refused(t, "type_text", res, authz.CodeActivationFailed, "keyboard focus")
	}
	// The oracle's barrier: keys typed into the other own window arrive; none went anywhere before.
	check(t, "type_text elsewhere", call(t, s, "type_text", map[string]any{"pid": other.PID, "window_id": other.Window, "text": "z"}), "")
	other.waitCount(t, "key_press", 1)
	if n := other.count(t, "key_press"); n != 1 {
		t.Errorf("the other window logged %d key presses, want only the barrier's", n)
	}
	if n := nofocus.count(t, "key_press"); n != landed {
		t.Errorf("the no-focus window logged %d key presses, want %d", n, landed)
	}
}
