package personui

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/internal/xauth"
	"github.com/cua-host/cua-host/test/testkit"
)

func TestAskEachButton(t *testing.T) {
	for _, want := range []Answer{Deny, AllowOnce, AllowForSession} {
		t.Run(want.String(), func(t *testing.T) {
			shown, res := startAsk(t, t.Context(), windowRequest())
			sh := waitShown(t, shown)
			time.Sleep(ArmDelay + 100*time.Millisecond)
			clickButton(t, sh, want.String())
			r := waitResult(t, res)
			if r.err != nil || r.answer != want {
				t.Fatalf("Ask = %v, %v, want %v, nil", r.answer, r.err, want)
			}
			if windowListed(t, sh.Window) {
				t.Errorf("window 0x%x still listed after Ask returned", sh.Window)
			}
		})
	}
}

func TestAskTimeoutDenies(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	shown, res := startAsk(t, ctx, windowRequest())
	sh := waitShown(t, shown)
	r := waitResult(t, res)
	if r.answer != Deny || r.err == nil {
		t.Fatalf("Ask = %v, %v, want deny with ErrNoAnswer", r.answer, r.err)
	}
	if windowListed(t, sh.Window) {
		t.Errorf("window 0x%x still listed after Ask returned", sh.Window)
	}
}

func TestAskWindowProperties(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	shown, res := startAsk(t, ctx, windowRequest())
	defer func() { cancel(); waitResult(t, res) }()
	sh := waitShown(t, shown)
	out := xrun(t, "xprop", "-id", hexID(sh.Window))
	for _, want := range []string{
		`WM_NAME(STRING) = "cua-host: an agent asks for permission"`,
		`WM_CLASS(STRING) = "cua-host", "cua-host"`,
		fmt.Sprintf("_NET_WM_PID(CARDINAL) = %d", os.Getpid()),
		"_NET_WM_WINDOW_TYPE(ATOM) = _NET_WM_WINDOW_TYPE_DIALOG",
		"_NET_WM_STATE_ABOVE",
		"Client accepts input or input focus: False",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("xprop -id %s lacks %q:\n%s", hexID(sh.Window), want, out)
		}
	}
	// Managed: the window manager reparented it into a frame, and lists it.
	tree := xrun(t, "xwininfo", "-id", hexID(sh.Window), "-tree")
	if _, parent, _ := strings.Cut(tree, "Parent window id:"); strings.Contains(strings.SplitN(parent, "\n", 2)[0], "(the root window)") {
		t.Errorf("dialog not reparented:\n%s", tree)
	}
	if list := xrun(t, "xprop", "-root", "_NET_CLIENT_LIST"); !strings.Contains(list, hexID(sh.Window)) {
		t.Errorf("dialog not in _NET_CLIENT_LIST: %s", list)
	}
	// Centred on the 1280×800 screen.
	cx, cy := sh.Bounds.Center()
	if cx < 620 || cx > 660 || cy < 380 || cy > 440 {
		t.Errorf("dialog centre (%d, %d), want about (640, 400)", cx, cy)
	}
	// It did not take the focus.
	if f := strings.TrimSpace(xrun(t, "xdotool", "getwindowfocus")); f == fmt.Sprint(sh.Window) {
		t.Errorf("dialog has the keyboard focus")
	}
}

func TestAskEarlyClickIgnored(t *testing.T) {
	// The early click must land well within ArmDelay of the dialog appearing; on a loaded
	// machine xdotool may start too late, and then the attempt is repeated.
	for attempt := 1; ; attempt++ {
		shown, res := startAsk(t, t.Context(), windowRequest())
		sh := waitShown(t, shown)
		at := time.Now()
		clickButton(t, sh, AllowOnce.String())
		early := time.Since(at) < ArmDelay-150*time.Millisecond
		select {
		case r := <-res:
			if early {
				t.Fatalf("a click within %v of showing answered: %v, %v", ArmDelay, r.answer, r.err)
			}
		case <-time.After(ArmDelay):
			clickButton(t, sh, Deny.String())
			if r := waitResult(t, res); r.answer != Deny || r.err != nil {
				t.Fatalf("Ask = %v, %v after a click past ArmDelay, want deny, nil", r.answer, r.err)
			}
		}
		if early {
			return
		}
		if attempt == 3 {
			t.Skip("xdotool never clicked within ArmDelay of the dialog appearing")
		}
	}
}

func TestAskKeysIgnored(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	shown, res := startAsk(t, ctx, windowRequest())
	sh := waitShown(t, shown)
	time.Sleep(ArmDelay + 100*time.Millisecond)
	// Give the dialog the focus by force and put the pointer on Allow, then type at it.
	x, y := sh.Buttons[1].Rect.Center()
	xrun(t, "xdotool", "mousemove", fmt.Sprint(x), fmt.Sprint(y), "windowfocus", "--sync", fmt.Sprint(sh.Window))
	if f := strings.TrimSpace(xrun(t, "xdotool", "getwindowfocus")); f != fmt.Sprint(sh.Window) {
		t.Fatalf("focus is on %s, want the dialog %d", f, sh.Window)
	}
	xrun(t, "xdotool", "key", "Return", "space", "KP_Enter", "Tab", "Return", "Escape", "alt+a", "y")
	xrun(t, "xdotool", "key", "--window", fmt.Sprint(sh.Window), "Return", "space")
	select {
	case r := <-res:
		t.Fatalf("keys answered the dialog: %v, %v", r.answer, r.err)
	case <-time.After(500 * time.Millisecond):
	}
	cancel()
	if r := waitResult(t, res); r.answer != Deny || !errors.Is(r.err, ErrNoAnswer) {
		t.Fatalf("Ask = %v, %v, want deny, ErrNoAnswer", r.answer, r.err)
	}
}

func TestAskPressAndReleaseOnSameButton(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	shown, res := startAsk(t, ctx, windowRequest())
	sh := waitShown(t, shown)
	time.Sleep(ArmDelay + 100*time.Millisecond)
	deny, once, session := sh.Buttons[0].Rect, sh.Buttons[1].Rect, sh.Buttons[2].Rect
	drag := func(from, to Rect) {
		fx, fy := from.Center()
		tx, ty := to.Center()
		xrun(t, "xdotool", "mousemove", fmt.Sprint(fx), fmt.Sprint(fy), "mousedown", "1",
			"mousemove", fmt.Sprint(tx), fmt.Sprint(ty), "mouseup", "1")
	}
	drag(deny, once)                                                              // pressed on Deny, released on Allow once
	drag(session, Rect{X: sh.Bounds.X + 5, Y: sh.Bounds.Y + 5})                   // pressed on Allow, released off it
	drag(Rect{X: sh.Bounds.X + 5, Y: sh.Bounds.Y + 5, Width: 1, Height: 1}, once) // released on Allow, pressed elsewhere
	bx, by := once.Center()
	xrun(t, "xdotool", "mousemove", fmt.Sprint(bx), fmt.Sprint(by), "click", "3", "click", "2")
	select {
	case r := <-res:
		t.Fatalf("a mismatched press and release answered: %v, %v", r.answer, r.err)
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	if r := waitResult(t, res); r.answer != Deny || !errors.Is(r.err, ErrNoAnswer) {
		t.Fatalf("Ask = %v, %v, want deny, ErrNoAnswer", r.answer, r.err)
	}
}

func TestAskOneAtATime(t *testing.T) {
	shown1, res1 := startAsk(t, t.Context(), windowRequest())
	sh := waitShown(t, shown1)
	// A second dialog waits for the first; its context still ends it.
	ctx2, cancel2 := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel2()
	shown2, res2 := startAsk(t, ctx2, windowRequest())
	r2 := waitResult(t, res2)
	if r2.answer != Deny || !errors.Is(r2.err, ErrNoAnswer) {
		t.Fatalf("waiting Ask = %v, %v, want deny, ErrNoAnswer", r2.answer, r2.err)
	}
	select {
	case s := <-shown2:
		t.Fatalf("second dialog shown (0x%x) while the first was open", s.Window)
	default:
	}
	time.Sleep(ArmDelay)
	clickButton(t, sh, AllowForSession.String())
	if r := waitResult(t, res1); r.answer != AllowForSession || r.err != nil {
		t.Fatalf("first Ask = %v, %v, want allow_for_session, nil", r.answer, r.err)
	}
	// The next one is shown at once.
	ctx3, cancel3 := context.WithCancel(t.Context())
	shown3, res3 := startAsk(t, ctx3, windowRequest())
	waitShown(t, shown3)
	cancel3()
	waitResult(t, res3)
}

func TestAskDisplayErrors(t *testing.T) {
	requireDisplay(t)
	dir := t.TempDir()
	wrong := filepath.Join(dir, "wrong")
	writeXauth(t, wrong, "", bytes.Repeat([]byte{0x42}, 16))
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts Options
	}{
		{"no such display", Options{Display: ":4242", XAuthority: testDisplay.XAuthority()}},
		{"remote display", Options{Display: "example.com:0", XAuthority: testDisplay.XAuthority()}},
		{"garbage display", Options{Display: ":x"}},
		{"missing xauthority", Options{Display: testDisplay.Name(), XAuthority: filepath.Join(dir, "missing")}},
		{"no entry for the display", Options{Display: testDisplay.Name(), XAuthority: empty}},
		{"wrong cookie", Options{Display: testDisplay.Name(), XAuthority: wrong}},
		{"no cookie", Options{Display: testDisplay.Name()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			a, err := Ask(t.Context(), tt.opts, windowRequest())
			if a != Deny || !errors.Is(err, ErrDisplay) {
				t.Fatalf("Ask = %v, %v, want deny, ErrDisplay", a, err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Ask took %v to fail", d)
			}
		})
	}
}

func TestAskExplicitXAuthority(t *testing.T) {
	// The environment points at a cookie the server refuses; Options point at the right one.
	wrong := filepath.Join(t.TempDir(), "wrong")
	writeXauth(t, wrong, "", bytes.Repeat([]byte{0x42}, 16))
	t.Setenv("XAUTHORITY", wrong)
	ctx, cancel := context.WithCancel(t.Context())
	shown, res := startAsk(t, ctx, windowRequest())
	waitShown(t, shown)
	cancel()
	waitResult(t, res)
}

// writeXauth writes an Xauthority file with one Wild entry for display disp ("" for any).
func writeXauth(t *testing.T, path, disp string, cookie []byte) {
	t.Helper()
	var b bytes.Buffer
	put := func(v []byte) {
		_ = binary.Write(&b, binary.BigEndian, uint16(len(v)))
		b.Write(v)
	}
	_ = binary.Write(&b, binary.BigEndian, uint16(xauth.FamilyWild))
	put(nil)
	put([]byte(disp))
	put([]byte(xauth.CookieName))
	put(cookie)
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestAskCoveredDialogIgnoresClicks(t *testing.T) {
	log := testkit.DebugLogger(t)
	shown := make(chan Shown, 16)
	res := make(chan askResult, 1)
	requireDisplay(t)
	opts := testOptions()
	opts.OnShown = func(s Shown) { shown <- s }
	opts.Logger = log
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		a, err := Ask(ctx, opts, windowRequest())
		res <- askResult{a, err}
	}()
	sh := waitShown(t, shown)
	time.Sleep(ArmDelay + 100*time.Millisecond)
	// Cover the dialog's text, not its buttons: what the person reads could be faked.
	unmap := overlay(t, Rect{X: sh.Bounds.X, Y: sh.Bounds.Y, Width: sh.Bounds.Width, Height: sh.Bounds.Height / 2})
	clickButton(t, sh, AllowOnce.String())
	select {
	case r := <-res:
		t.Fatalf("a click on a covered dialog answered: %v, %v", r.answer, r.err)
	case <-time.After(300 * time.Millisecond):
	}
	unmap()
	sh = waitShown(t, shown) // visible again
	time.Sleep(ArmDelay + 100*time.Millisecond)
	clickButton(t, sh, AllowOnce.String())
	if r := waitResult(t, res); r.answer != AllowOnce || r.err != nil {
		t.Fatalf("Ask = %v, %v, want allow_once, nil", r.answer, r.err)
	}
}

func TestAskClosedByWindowManager(t *testing.T) {
	shown, res := startAsk(t, t.Context(), windowRequest())
	sh := waitShown(t, shown)
	xrun(t, "wmctrl", "-i", "-c", hexID(sh.Window))
	if r := waitResult(t, res); r.answer != Deny || r.err != nil {
		t.Fatalf("Ask = %v, %v after the window manager closed it, want deny, nil", r.answer, r.err)
	}
}

func TestAskDestroyedByAnotherClient(t *testing.T) {
	shown, res := startAsk(t, t.Context(), windowRequest())
	sh := waitShown(t, shown)
	xrun(t, "xdotool", "windowclose", fmt.Sprint(sh.Window))
	if r := waitResult(t, res); r.answer != Deny || !errors.Is(r.err, ErrDisplay) {
		t.Fatalf("Ask = %v, %v after its window was destroyed, want deny, ErrDisplay", r.answer, r.err)
	}
}
