package personui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/display"
	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/test/testkit"
)

// The desktop tests run against a private Xvfb with openbox. Their oracles are programs
// independent of this package: xprop, xwininfo and xdotool.
var testPrograms = []string{"Xvfb", "openbox", "xdotool", "xprop", "xwininfo", "wmctrl", "xinput", "xterm"}

var (
	testDisplay *display.Display
	testEnv     []string // this process's environment plus the private display's
	skipReason  string
)

func TestMain(m *testing.M) { os.Exit(testkit.CheckLeaks(runTests(m))) }

func runTests(m *testing.M) int {
	if skipReason = testkit.Missing(testPrograms...); skipReason != "" {
		return m.Run()
	}
	d, err := testkit.StartDisplay(display.Options{WindowManager: true, Width: 1280, Height: 800})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer d.Close()
	testDisplay = d
	testEnv = append(os.Environ(), d.Env()...)
	// The package must connect with the display in its Options and nothing else: point this
	// process's DISPLAY somewhere useless. XAUTHORITY stays valid for the tests' own observer
	// connection; TestAskExplicitXAuthority changes it.
	os.Setenv("DISPLAY", ":4242")
	os.Setenv("XAUTHORITY", d.XAuthority())
	return m.Run()
}

// requireDisplay skips (or, with CI set, fails) a test that needs the private display.
func requireDisplay(t testing.TB) {
	t.Helper()
	testkit.Require(t, skipReason)
}

// testOptions returns Options for the private display.
func testOptions() Options {
	return Options{Display: testDisplay.Name(), XAuthority: testDisplay.XAuthority()}
}

// xrun runs an X program against the private display and returns its output.
func xrun(t testing.TB, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = testEnv
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// clickAt moves the core pointer to (x, y) and clicks button 1 with xdotool.
func clickAt(t testing.TB, x, y int) {
	t.Helper()
	xrun(t, "xdotool", "mousemove", fmt.Sprint(x), fmt.Sprint(y), "click", "1")
}

// clickButton clicks the centre of the named button of sh.
func clickButton(t testing.TB, sh Shown, name string) {
	t.Helper()
	for _, b := range sh.Buttons {
		if b.Name == name {
			x, y := b.Rect.Center()
			clickAt(t, x, y)
			return
		}
	}
	t.Fatalf("no button %q in %+v", name, sh)
}

// windowListed reports whether xwininfo -root -tree lists window id.
func windowListed(t testing.TB, id uint32) bool {
	t.Helper()
	// xwininfo fails when a window goes away while it walks the tree (a BadWindow error),
	// which is what windows being closed do: walk again.
	for range 20 {
		cmd := exec.Command("xwininfo", "-root", "-tree")
		cmd.Env = testEnv
		if out, err := cmd.Output(); err == nil {
			return strings.Contains(string(out), fmt.Sprintf("0x%x ", id))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return strings.Contains(xrun(t, "xwininfo", "-root", "-tree"), fmt.Sprintf("0x%x ", id))
}

type askResult struct {
	answer Answer
	err    error
}

// startAsk runs Ask in a goroutine; the returned channels deliver every Shown and the
// result. The test waits for the result before it ends.
func startAsk(t *testing.T, ctx context.Context, req Request) (<-chan Shown, <-chan askResult) {
	t.Helper()
	requireDisplay(t)
	shown := make(chan Shown, 16)
	res := make(chan askResult, 1)
	opts := testOptions()
	opts.OnShown = func(s Shown) { shown <- s }
	go func() {
		a, err := Ask(ctx, opts, req)
		res <- askResult{a, err}
	}()
	return shown, res
}

func waitShown(t testing.TB, ch <-chan Shown) Shown {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("window not shown within 10 s")
	}
	return Shown{}
}

func waitResult(t testing.TB, ch <-chan askResult) askResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(15 * time.Second):
		t.Fatal("Ask did not return within 15 s")
	}
	return askResult{}
}

func windowRequest() Request {
	return Request{
		Session: "build-bot", Mode: "standard", Tool: "click", Operation: Input,
		Resource:     Resource{Kind: ResourceWindow, Title: "Inbox - Mail", App: "thunderbird", Executable: "/usr/lib/thunderbird/thunderbird", PID: 4242},
		SessionGrant: 15 * time.Minute,
	}
}

func hexID(id uint32) string { return fmt.Sprintf("0x%x", id) }

// overlay maps an override-redirect window of the test's own X client over r, the way a
// hostile program would cover part of a dialog. It is destroyed at cleanup.
func overlay(tb testing.TB, r Rect) (unmap func()) {
	tb.Helper()
	x, err := xgb.NewConnDisplay(testDisplay.Name())
	if err != nil {
		tb.Fatalf("overlay: %v", err)
	}
	scr := xproto.Setup(x).DefaultScreen(x)
	w, _ := xproto.NewWindowId(x)
	if err := xproto.CreateWindowChecked(x, scr.RootDepth, w, scr.Root, int16(r.X), int16(r.Y),
		uint16(r.Width), uint16(r.Height), 0, xproto.WindowClassInputOutput, scr.RootVisual,
		xproto.CwBackPixel|xproto.CwOverrideRedirect, []uint32{0xff0000, 1}).Check(); err != nil {
		tb.Fatalf("overlay: %v", err)
	}
	if err := xproto.MapWindowChecked(x, w).Check(); err != nil {
		tb.Fatalf("overlay: %v", err)
	}
	tb.Cleanup(x.Close)
	return func() { _ = xproto.UnmapWindowChecked(x, w).Check() }
}
