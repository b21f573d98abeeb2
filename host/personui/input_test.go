package personui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"

	"github.com/cua-host/cua-host/internal/xinput2"
)

// The tests of the input rule drive the windows through devices of their own: an XInput2
// master pair the test creates, whose XTEST slaves send button and key events (XTEST's XI1
// device events name the slave). A pair named "personui person" stands for the person's
// mouse and keyboard when the test seam (Options.physicalForTest) says its slaves are
// physical; a pair named as the worker names a session's (xinput2.SeatName) stands for a
// session's devices. xdotool stands for any program on the display: it uses XTEST on the
// core devices, or SendEvent with --window.

// personName names the pair that stands for the person's devices.
const personName = "personui person"

// personSeam makes the "personui person" pair's slaves count as physical.
func personSeam(name string) bool { return strings.HasPrefix(name, personName+" ") }

// inputPair is a master pointer and keyboard pair of the test's own, driven through its
// XTEST slaves from a connection of its own.
type inputPair struct {
	x                    *xgb.Conn
	root                 xproto.Window
	firstEvent           byte // XInputExtension's first event
	pointer, keyboard    uint16
	xtestPtr, xtestKeybd uint16
}

// newInputPair creates the master pair name; it is removed at cleanup.
func newInputPair(t *testing.T, name string) *inputPair {
	t.Helper()
	requireDisplay(t)
	x, err := xgb.NewConnDisplay(testDisplay.Name())
	if err != nil {
		t.Fatalf("input pair: %v", err)
	}
	t.Cleanup(x.Close)
	if err := xinput2.Init(x); err != nil {
		t.Fatal(err)
	}
	if err := xtest.Init(x); err != nil {
		t.Fatal(err)
	}
	ext, err := xproto.QueryExtension(x, uint16(len(xinput2.Extension)), xinput2.Extension).Reply()
	if err != nil {
		t.Fatal(err)
	}
	if err := xinput2.AddMaster(x, name); err != nil {
		t.Fatal(err)
	}
	p := &inputPair{x: x, root: xproto.Setup(x).DefaultScreen(x).Root, firstEvent: ext.FirstEvent}
	devs, err := xinput2.Devices(x)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		switch d.Name {
		case name + " pointer":
			p.pointer = d.ID
		case name + " keyboard":
			p.keyboard = d.ID
		case name + " XTEST pointer":
			p.xtestPtr = d.ID
		case name + " XTEST keyboard":
			p.xtestKeybd = d.ID
		}
	}
	if p.pointer == 0 || p.keyboard == 0 || p.xtestPtr == 0 || p.xtestKeybd == 0 {
		t.Fatalf("master pair %q not found in %+v", name, devs)
	}
	t.Cleanup(func() { _ = xinput2.RemoveMaster(x, p.pointer) })
	// The pair's pointer is this connection's client pointer: WarpPointer moves it.
	if err := xinput2.SetClientPointer(x, 0, p.pointer); err != nil {
		t.Fatal(err)
	}
	return p
}

// sync waits until the server processed everything sent on the pair's connection.
func (p *inputPair) sync(t *testing.T) {
	t.Helper()
	if _, err := xproto.GetInputFocus(p.x).Reply(); err != nil {
		t.Fatal(err)
	}
}

// click moves the pair's pointer to root (x, y) and clicks button 1 through its XTEST slave.
func (p *inputPair) click(t *testing.T, x, y int) {
	t.Helper()
	xproto.WarpPointer(p.x, 0, p.root, 0, 0, 0, 0, int16(x), int16(y))
	p.sync(t)
	for _, typ := range []byte{3, 4} { // DeviceButtonPress, DeviceButtonRelease
		if err := xtest.FakeInputChecked(p.x, p.firstEvent+typ, 1, 0, 0, 0, 0, byte(p.xtestPtr)).Check(); err != nil {
			t.Fatalf("FakeInput: %v", err)
		}
	}
	p.sync(t)
}

// stopKey presses and releases Ctrl+Alt+Shift+Escape on the pair's keyboard.
func (p *inputPair) stopKey(t *testing.T) {
	t.Helper()
	var kcs []byte
	for _, sym := range []xproto.Keysym{0xffe3, 0xffe9, 0xffe1, keysymEscape} { // Control_L, Alt_L, Shift_L, Escape
		k, err := keycodesOf(p.x, sym)
		if err != nil || len(k) == 0 {
			t.Fatalf("no keycode for keysym 0x%x: %v", sym, err)
		}
		kcs = append(kcs, k[0])
	}
	send := func(typ, kc byte) {
		if err := xtest.FakeInputChecked(p.x, p.firstEvent+typ, kc, 0, 0, 0, 0, byte(p.xtestKeybd)).Check(); err != nil {
			t.Fatalf("FakeInput: %v", err)
		}
	}
	for _, kc := range kcs {
		send(1, kc) // DeviceKeyPress
	}
	for i := len(kcs) - 1; i >= 0; i-- {
		send(2, kcs[i]) // DeviceKeyRelease
	}
	p.sync(t)
}

// sendClick sends a ButtonPress and a ButtonRelease of button 1 at window point (x, y) to
// win with SendEvent, from a client of the test's own. Their timestamp is far in the
// server's future, so that no time gate stops them: only their being sent does.
func sendClick(t *testing.T, win uint32, x, y int) {
	t.Helper()
	c, err := xgb.NewConnDisplay(testDisplay.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	root := xproto.Setup(c).DefaultScreen(c).Root
	for _, ev := range []interface{ Bytes() []byte }{
		xproto.ButtonPressEvent{Detail: 1, Time: 0x7fffffff, Root: root, Event: xproto.Window(win), EventX: int16(x), EventY: int16(y), SameScreen: true},
		xproto.ButtonReleaseEvent{Detail: 1, Time: 0x7fffffff, Root: root, Event: xproto.Window(win), EventX: int16(x), EventY: int16(y), SameScreen: true, State: xproto.KeyButMaskButton1},
	} {
		if err := xproto.SendEventChecked(c, false, xproto.Window(win), 0, string(ev.Bytes())).Check(); err != nil {
			t.Fatalf("SendEvent: %v", err)
		}
	}
}

// xdotoolOK runs xdotool against the private display and fails the test unless it exits 0:
// the proof that what it was asked to send was sent.
func xdotoolOK(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("xdotool", args...)
	cmd.Env = testEnv
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("xdotool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// noAnswerWithin fails the test when Ask returns within d.
func noAnswerWithin(t *testing.T, res <-chan askResult, d time.Duration, what string) {
	t.Helper()
	select {
	case r := <-res:
		t.Fatalf("%s answered the dialog: %v, %v", what, r.answer, r.err)
	case <-time.After(d):
	}
}

// startAskWith is startAsk with options of the test's.
func startAskWith(t *testing.T, ctx context.Context, opts Options, req Request) (<-chan Shown, <-chan askResult) {
	t.Helper()
	requireDisplay(t)
	shown := make(chan Shown, 16)
	res := make(chan askResult, 1)
	opts.OnShown = func(s Shown) { shown <- s }
	go func() {
		a, err := Ask(ctx, opts, req)
		res <- askResult{a, err}
	}()
	return shown, res
}

func buttonCenter(t *testing.T, sh Shown, name string) (int, int) {
	t.Helper()
	for _, b := range sh.Buttons {
		if b.Name == name {
			return b.Rect.Center()
		}
	}
	t.Fatalf("no button %q in %+v", name, sh)
	return 0, 0
}

// TestAskPhysicalOnly: on a display with a physical device (the seam makes the test's
// "person" pair one), a click on Allow through XTEST (xdotool, exit 0) and one sent with
// SendEvent (xdotool --window, and a SendEvent of the test's own) do not answer, and the
// dialog times out (deny); the person's device answers.
func TestAskPhysicalOnly(t *testing.T) {
	person := newInputPair(t, personName)
	opts := testOptions()
	opts.physicalForTest = personSeam
	if f, err := ProbeInput(t.Context(), opts); err != nil || f.Kind != InputPhysical {
		t.Fatalf("ProbeInput with the seam = %+v, %v, want physical", f, err)
	}

	t.Run("xtest and sendevent ignored", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		shown, res := startAskWith(t, ctx, opts, windowRequest())
		sh := waitShown(t, shown)
		time.Sleep(ArmDelay + 100*time.Millisecond)
		x, y := buttonCenter(t, sh, AllowOnce.String())
		xdotoolOK(t, "mousemove", fmt.Sprint(x), fmt.Sprint(y), "click", "1")
		noAnswerWithin(t, res, 300*time.Millisecond, "an XTEST click (xdotool)")
		xdotoolOK(t, "click", "--window", fmt.Sprint(sh.Window), "1")
		sendClick(t, sh.Window, x-sh.Bounds.X, y-sh.Bounds.Y)
		r := waitResult(t, res)
		if r.answer != Deny || !errors.Is(r.err, ErrNoAnswer) {
			t.Fatalf("Ask = %v, %v after XTEST and SendEvent clicks on Allow, want deny, ErrNoAnswer (timeout)", r.answer, r.err)
		}
	})

	t.Run("the person's device answers", func(t *testing.T) {
		shown, res := startAskWith(t, t.Context(), opts, windowRequest())
		sh := waitShown(t, shown)
		time.Sleep(ArmDelay + 100*time.Millisecond)
		x, y := buttonCenter(t, sh, AllowOnce.String())
		person.click(t, x, y)
		if r := waitResult(t, res); r.answer != AllowOnce || r.err != nil {
			t.Fatalf("Ask = %v, %v after the person's click on Allow once, want allow_once, nil", r.answer, r.err)
		}
	})
}

// TestAskXTestOnly: on Xvfb, which has no physical device, XTEST answers (xdotool), except
// through a session's own devices (a pair named as the worker names them).
func TestAskXTestOnly(t *testing.T) {
	requireDisplay(t)
	if f, err := ProbeInput(t.Context(), testOptions()); err != nil || f.Kind != InputXTestOnly || len(f.Pointers)+len(f.Keyboards) != 0 {
		t.Fatalf("ProbeInput on Xvfb = %+v, %v, want xtest_only without physical devices", f, err)
	}
	session := newInputPair(t, xinput2.SeatName("agent", os.Getpid()))
	shown, res := startAsk(t, t.Context(), windowRequest())
	sh := waitShown(t, shown)
	time.Sleep(ArmDelay + 100*time.Millisecond)
	x, y := buttonCenter(t, sh, AllowOnce.String())
	session.click(t, x, y)
	noAnswerWithin(t, res, 400*time.Millisecond, "a click through a session's own devices")
	xdotoolOK(t, "mousemove", fmt.Sprint(x), fmt.Sprint(y), "click", "1")
	if r := waitResult(t, res); r.answer != AllowOnce || r.err != nil {
		t.Fatalf("Ask = %v, %v after an XTEST click on an XTEST-only display, want allow_once, nil", r.answer, r.err)
	}
}

// TestProbeInputXTestDevices: what ProbeInput calls XTEST is what the server marks so
// (xinput list-props shows "XTEST Device" on exactly those devices).
func TestProbeInputXTestDevices(t *testing.T) {
	requireDisplay(t)
	c, err := dial(t.Context(), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer c.x.Close()
	if err := xinput2.Init(c.x); err != nil {
		t.Fatal(err)
	}
	tbl, err := loadInputs(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	for id, d := range tbl.devs {
		if isMaster(d.Device) {
			continue
		}
		out := xrun(t, "xinput", "list-props", fmt.Sprint(id))
		if marked := strings.Contains(out, "XTEST Device"); marked != d.xtest {
			t.Errorf("device %d %q: xtest = %v, xinput list-props says %v:\n%s", id, d.Name, d.xtest, marked, out)
		}
	}
}

func TestClassify(t *testing.T) {
	core := []xinput2.Device{
		{ID: 2, Use: xinput2.MasterPointer, Attachment: 3, Name: "Virtual core pointer"},
		{ID: 3, Use: xinput2.MasterKeyboard, Attachment: 2, Name: "Virtual core keyboard"},
		{ID: 4, Use: xinput2.SlavePointer, Attachment: 2, Name: "Virtual core XTEST pointer"},
		{ID: 5, Use: xinput2.SlaveKeyboard, Attachment: 3, Name: "Virtual core XTEST keyboard"},
	}
	xvfb := append(core[:4:4],
		xinput2.Device{ID: 6, Use: xinput2.SlavePointer, Attachment: 2, Name: "Xvfb mouse"},
		xinput2.Device{ID: 7, Use: xinput2.SlaveKeyboard, Attachment: 3, Name: "Xvfb keyboard"})
	seat := append(xvfb[:6:6],
		xinput2.Device{ID: 8, Use: xinput2.MasterPointer, Attachment: 9, Name: xinput2.SeatName("s", 42) + " pointer"},
		xinput2.Device{ID: 9, Use: xinput2.MasterKeyboard, Attachment: 8, Name: xinput2.SeatName("s", 42) + " keyboard"},
		xinput2.Device{ID: 10, Use: xinput2.SlavePointer, Attachment: 8, Name: xinput2.SeatName("s", 42) + " XTEST pointer"},
		xinput2.Device{ID: 11, Use: xinput2.SlaveKeyboard, Attachment: 9, Name: xinput2.SeatName("s", 42) + " XTEST keyboard"})
	mouse := append(seat[:10:10],
		xinput2.Device{ID: 12, Use: xinput2.FloatingSlave, Name: "Logitech USB Mouse"},
		xinput2.Device{ID: 13, Use: xinput2.SlaveKeyboard, Attachment: 9, Name: "AT keyboard"})
	xtestProp := map[uint16]bool{4: true, 5: true, 10: true, 11: true}
	tests := []struct {
		name     string
		devs     []xinput2.Device
		seam     func(string) bool
		kind     InputKind
		dev, src uint16
		ok       bool
	}{
		{"xvfb: core xtest", xvfb, nil, InputXTestOnly, 2, 4, true},
		{"xvfb: a session's master", seat, nil, InputXTestOnly, 8, 10, false},
		{"xvfb: a master as the source", xvfb, nil, InputXTestOnly, 2, 2, false},
		{"xvfb: an unknown source", xvfb, nil, InputXTestOnly, 2, 99, false},
		{"physical: core xtest", mouse, nil, InputPhysical, 2, 4, false},
		{"physical: a floating mouse makes the display physical", mouse, nil, InputPhysical, 2, 6, false},
		{"physical: a keyboard attached to a session's master", mouse, nil, InputPhysical, 9, 13, false},
		{"seam: the chosen device", xvfb, func(n string) bool { return n == "Virtual core XTEST pointer" }, InputPhysical, 2, 4, true},
		{"seam: another xtest device", xvfb, func(n string) bool { return n == "Xvfb mouse" }, InputPhysical, 2, 4, false},
		{"seam: the inert device chosen", xvfb, func(n string) bool { return n == "Xvfb mouse" }, InputPhysical, 2, 6, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl := classify(tt.devs, xtestProp, tt.seam)
			if tbl.kind != tt.kind {
				t.Errorf("kind = %v, want %v", tbl.kind, tt.kind)
			}
			if ok, _, why := tbl.accept(tt.dev, tt.src); ok != tt.ok {
				t.Errorf("accept(%d, %d) = %v (%s), want %v", tt.dev, tt.src, ok, why, tt.ok)
			}
		})
	}
	if f := classify(mouse, xtestProp, nil).facts(); len(f.Pointers) != 1 || f.Pointers[0].Name != "Logitech USB Mouse" || !f.Pointers[0].Floating ||
		len(f.Keyboards) != 1 || f.Keyboards[0].Name != "AT keyboard" {
		t.Errorf("facts = %+v, want the floating mouse and the keyboard", f)
	}
	if s := classify(xvfb, xtestProp, nil).facts().Summary(); !strings.Contains(s, "no physical input devices") {
		t.Errorf("Summary on Xvfb = %q", s)
	}
}

// logBuffer collects log lines.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
