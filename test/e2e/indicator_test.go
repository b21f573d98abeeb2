package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cua-host/cua-host/host/display"
	"github.com/cua-host/cua-host/host/personui"
)

// TestIndicatorStop: `cua-host run` on a display shared with a person shows a bar naming
// its session; the person clicks Stop with the core pointer (xdotool), and the session is
// revoked at once: the call in flight ends with an honest outcome, later calls are refused
// with authorization_revoked, and the bar goes away. Oracles: xdotool/xwininfo/xprop for the
// bar, the MCP client for the outcomes.
func TestIndicatorStop(t *testing.T) {
	needDesktop(t)
	need(t, "xdotool", "xprop", "xwininfo")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	d, err := display.Start(ctx, display.Options{WindowManager: true, Width: 1280, Height: 800})
	if err != nil {
		t.Fatalf("start display: %v", err)
	}
	defer d.Close()
	env := append(d.Env(), "HOME="+t.TempDir())
	xenv := append(os.Environ(), d.Env()...)
	x := func(name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Env = xenv
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}

	rp := startRunEnv(t, env, "--display", d.Name())
	var bar string
	if !waitFor(10*time.Second, func() bool {
		out, err := x("xdotool", "search", "--name", "^cua-host: agent sessions active")
		bar, _, _ = strings.Cut(out, "\n")
		return err == nil && bar != ""
	}) {
		t.Fatal("no session indicator appeared on the shared display")
	}
	if out, _ := x("xprop", "-id", bar, "_NET_WM_NAME"); !strings.Contains(out, "mcp (standard)") {
		t.Errorf("the indicator does not list the session: %s", out)
	}

	// A call in flight when the person stops: it waits for the person's consent to type
	// into a window of theirs, and the person answers with Stop instead.
	user := exec.Command("xterm", "-title", "person-window")
	user.Env = xenv
	if err := user.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { user.Process.Kill(); user.Wait() }()
	var uwin string
	if !waitFor(10*time.Second, func() bool {
		out, err := x("xdotool", "search", "--name", "^person-window$")
		uwin, _, _ = strings.Cut(out, "\n")
		if err != nil || uwin == "" {
			return false
		}
		// Managed: the window manager lists it (it maps the window first).
		list, _ := x("xprop", "-root", "_NET_CLIENT_LIST")
		return strings.Contains(list, fmt.Sprintf("0x%x", atoi(uwin)))
	}) {
		t.Fatal("the person's xterm never showed a managed window")
	}
	inflight := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := rp.cs.CallTool(ctx, &mcp.CallToolParams{Name: "type_text", Arguments: map[string]any{
			"pid": user.Process.Pid, "window_id": atoi(uwin), "text": "echo typed-by-the-agent"}})
		if err != nil {
			t.Errorf("type_text: %v", err)
		}
		inflight <- res
	}()
	if !waitFor(10*time.Second, func() bool {
		_, err := x("xdotool", "search", "--name", "^cua-host: an agent asks for permission")
		return err == nil
	}) {
		t.Fatal("the consent dialog never appeared")
	}

	// The person clicks Stop: the button at the bar's right end.
	geo, err := x("xwininfo", "-id", bar)
	if err != nil {
		t.Fatalf("xwininfo: %v: %s", err, geo)
	}
	bx, by, bw, bh := field(geo, "Absolute upper-left X:"), field(geo, "Absolute upper-left Y:"), field(geo, "Width:"), field(geo, "Height:")
	time.Sleep(personui.ArmDelay + 300*time.Millisecond)
	if out, err := x("xdotool", "mousemove", "--sync", fmt.Sprint(bx+bw-20), fmt.Sprint(by+bh/2), "click", "1"); err != nil {
		t.Fatalf("xdotool click Stop: %v: %s", err, out)
	}
	clicked := time.Now()

	var res *mcp.CallToolResult
	select {
	case res = <-inflight:
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight did not end after Stop")
	}
	ended := time.Since(clicked)
	if res != nil {
		if o := outcomeOf(res); o != "unknown" && o != "not_started" {
			t.Errorf("the call in flight ended %v after Stop, want unknown or not_started: %s", o, text(res))
		}
	}
	t.Logf("Stop → the call in flight ended in %v", ended)

	after := rp.call(t, "get_session", nil)
	if o := outcomeOf(after); o != "not_started" || !strings.Contains(text(after), "authorization_revoked") {
		t.Errorf("a call after Stop = %v %q, want not_started authorization_revoked", o, text(after))
	}
	if !waitFor(5*time.Second, func() bool {
		out, _ := x("xwininfo", "-id", bar)
		return !strings.Contains(out, "IsViewable")
	}) {
		t.Errorf("the indicator is still shown after Stop")
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}

// field reads an integer after label in xwininfo's output.
func field(out, label string) int {
	_, rest, ok := strings.Cut(out, label)
	if !ok {
		return 0
	}
	v, _, _ := strings.Cut(strings.TrimSpace(rest), "\n")
	n, _ := strconv.Atoi(strings.TrimSpace(v))
	return n
}

// sharedRun is `cua-host run` on a display shared with a person, with its bar shown.
type sharedRun struct {
	rp   *runProc
	x    func(name string, args ...string) (string, error) // an X program on the display
	xenv []string
	bar  string // the bar's window id (decimal, as xdotool prints it)
}

// startSharedRun starts `cua-host run --display NAME` with env added to its environment and
// xenv as the environment of the test's X programs, and waits for its bar.
func startSharedRun(t *testing.T, name string, env, xenv []string) *sharedRun {
	t.Helper()
	sr := &sharedRun{xenv: xenv}
	sr.x = func(prog string, args ...string) (string, error) {
		cmd := exec.Command(prog, args...)
		cmd.Env = xenv
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	sr.rp = startRunEnv(t, env, "--display", name)
	if !waitFor(10*time.Second, func() bool {
		out, err := sr.x("xdotool", "search", "--name", "^cua-host: agent sessions active")
		sr.bar, _, _ = strings.Cut(out, "\n")
		return err == nil && sr.bar != ""
	}) {
		t.Fatalf("no session indicator appeared on %s\nlog:\n%s", name, sr.rp.log())
	}
	return sr
}

// clickStop clicks the bar's Stop button (its right end) with xdotool, ArmDelay after now.
func (sr *sharedRun) clickStop(t *testing.T) {
	t.Helper()
	geo, err := sr.x("xwininfo", "-id", sr.bar)
	if err != nil {
		t.Fatalf("xwininfo: %v: %s", err, geo)
	}
	bx, by, bw, bh := field(geo, "Absolute upper-left X:"), field(geo, "Absolute upper-left Y:"), field(geo, "Width:"), field(geo, "Height:")
	time.Sleep(personui.ArmDelay + 300*time.Millisecond)
	if out, err := sr.x("xdotool", "mousemove", fmt.Sprint(bx+bw-20), fmt.Sprint(by+bh/2), "click", "1"); err != nil {
		t.Fatalf("xdotool click Stop: %v: %s", err, out)
	}
}

// waitRevoked polls the session until a call is refused with authorization_revoked: the
// proof, from the agent's side, that the session was revoked.
func (sr *sharedRun) waitRevoked(t *testing.T, what string) {
	t.Helper()
	var last string
	if !waitFor(10*time.Second, func() bool {
		res := sr.rp.call(t, "get_session", nil)
		last = fmt.Sprintf("%v %q", outcomeOf(res), text(res))
		return outcomeOf(res) == "not_started" && strings.Contains(text(res), "authorization_revoked")
	}) {
		t.Fatalf("%s: the session was not revoked; the last call: %s\nlog:\n%s", what, last, sr.rp.log())
	}
}

// openXvfb starts Xvfb without -auth (no access control: every local client connects
// without a cookie) and openbox on it, and returns the display's name and the environment
// of an X program there, which names no Xauthority file. Both are stopped at cleanup.
func openXvfb(t *testing.T) (string, []string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	xvfb := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset")
	xvfb.ExtraFiles = []*os.File{w}
	if err := xvfb.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { xvfb.Process.Kill(); xvfb.Wait() })
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(l)
	}()
	var name string
	select {
	case n := <-line:
		if n == "" {
			t.Fatal("Xvfb exited before it was ready")
		}
		name = ":" + n
	case <-time.After(30 * time.Second):
		t.Fatal("Xvfb not ready within 30 s")
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DISPLAY=") && !strings.HasPrefix(kv, "XAUTHORITY=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "DISPLAY="+name, "HOME="+t.TempDir())
	ob := exec.Command("openbox")
	ob.Env = env
	if err := ob.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ob.Process.Kill(); ob.Wait() })
	if !waitFor(10*time.Second, func() bool {
		cmd := exec.Command("xprop", "-root", "_NET_SUPPORTING_WM_CHECK")
		cmd.Env = env
		out, err := cmd.Output()
		return err == nil && strings.Contains(string(out), "window id")
	}) {
		t.Fatal("openbox did not take the screen within 10 s")
	}
	return name, env
}

// TestIndicatorNoAccessControl: `cua-host run` on an Xvfb started without -auth, with no
// Xauthority file anywhere ($XAUTHORITY unset, none in $HOME), starts like every other X
// client does there: its bar appears (xdotool, itself without a cookie, finds it) and Stop
// revokes the session.
func TestIndicatorNoAccessControl(t *testing.T) {
	needDesktop(t)
	need(t, "xdotool", "xprop", "xwininfo")
	name, xenv := openXvfb(t)
	home := t.TempDir()
	sr := startSharedRun(t, name, []string{"XAUTHORITY=", "HOME=" + home}, xenv)
	if _, err := os.Stat(filepath.Join(home, ".Xauthority")); !os.IsNotExist(err) {
		t.Fatalf("%s/.Xauthority exists (%v): the test needs it missing", home, err)
	}
	if res := sr.rp.call(t, "get_session", nil); outcomeOf(res) != "completed" {
		t.Fatalf("get_session = %v %q, want completed", outcomeOf(res), text(res))
	}
	sr.clickStop(t)
	sr.waitRevoked(t, "Stop on a display without access control")
}

// sharedDisplay starts a private Xvfb with openbox that the test treats as a person's
// display, and returns it with the environment of X programs there.
func sharedDisplay(t *testing.T) (*display.Display, []string) {
	t.Helper()
	d, err := display.Start(t.Context(), display.Options{WindowManager: true, Width: 1280, Height: 800})
	if err != nil {
		t.Fatalf("start display: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d, append(os.Environ(), d.Env()...)
}

// rootChildren returns the root's children as xwininfo -root -children lists them, top-most
// first.
func rootChildren(sr *sharedRun) []string {
	out, _ := sr.x("xwininfo", "-root", "-children")
	var ids []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "0x") {
			ids = append(ids, f[0])
		}
	}
	return ids
}

// TestIndicatorAboveOverrideRedirect: a program maps an override-redirect xterm across the
// top of the screen, over the bar. The bar puts itself back on top — xwininfo lists it above
// the xterm — and the person's click on Stop revokes the session.
func TestIndicatorAboveOverrideRedirect(t *testing.T) {
	needDesktop(t)
	need(t, "xdotool", "xprop", "xwininfo")
	d, xenv := sharedDisplay(t)
	sr := startSharedRun(t, d.Name(), append(d.Env(), "HOME="+t.TempDir()), xenv)
	bar := fmt.Sprintf("0x%x", atoi(sr.bar))
	before := map[string]bool{}
	for _, id := range rootChildren(sr) {
		before[id] = true
	}
	xt := exec.Command("xterm", "-xrm", "XTerm*overrideRedirect: true", "-geometry", "200x5+0+0", "-e", "sleep", "60")
	xt.Env = xenv
	if err := xt.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { xt.Process.Kill(); xt.Wait() }()
	var cover string
	if !waitFor(10*time.Second, func() bool {
		for _, id := range rootChildren(sr) {
			if out, err := sr.x("xwininfo", "-id", id); !before[id] && err == nil &&
				strings.Contains(out, "Override Redirect State: yes") && strings.Contains(out, "IsViewable") {
				cover = id
				return true
			}
		}
		return false
	}) {
		t.Fatal("the override-redirect xterm never showed")
	}
	if !waitFor(2*time.Second, func() bool {
		ids := rootChildren(sr)
		return slices.Index(ids, bar) >= 0 && slices.Index(ids, bar) < slices.Index(ids, cover)
	}) {
		t.Fatalf("the bar %s is not above the override-redirect xterm %s: %v", bar, cover, rootChildren(sr))
	}
	sr.clickStop(t)
	sr.waitRevoked(t, "Stop with an override-redirect xterm mapped over the bar")
}

// TestIndicatorCoveredRevokes: a program keeps an override-redirect window of its own over
// the bar, raising it again each time the bar restacks. The host cannot keep the bar
// visible, so it revokes the session (fail closed) and says why in its log.
func TestIndicatorCoveredRevokes(t *testing.T) {
	needDesktop(t)
	need(t, "xdotool", "xprop", "xwininfo")
	d, xenv := sharedDisplay(t)
	sr := startSharedRun(t, d.Name(), append(d.Env(), "HOME="+t.TempDir()), xenv)
	geo, err := sr.x("xwininfo", "-id", sr.bar)
	if err != nil {
		t.Fatalf("xwininfo: %v: %s", err, geo)
	}
	t.Setenv("XAUTHORITY", d.XAuthority())
	x, err := xgb.NewConnDisplay(d.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	scr := xproto.Setup(x).DefaultScreen(x)
	w, _ := xproto.NewWindowId(x)
	if err := xproto.CreateWindowChecked(x, scr.RootDepth, w, scr.Root, 0, 0, 1280, 40, 0,
		xproto.WindowClassInputOutput, scr.RootVisual, xproto.CwBackPixel|xproto.CwOverrideRedirect,
		[]uint32{0x00ff00, 1}).Check(); err != nil {
		t.Fatal(err)
	}
	if err := xproto.ChangeWindowAttributesChecked(x, scr.Root, xproto.CwEventMask,
		[]uint32{xproto.EventMaskSubstructureNotify}).Check(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, xerr := x.WaitForEvent()
			if ev == nil && xerr == nil {
				return
			}
			if c, ok := ev.(xproto.ConfigureNotifyEvent); ok && c.Window != w {
				xproto.ConfigureWindow(x, w, xproto.ConfigWindowStackMode, []uint32{xproto.StackModeAbove})
			}
		}
	}()
	defer func() { x.Close(); <-done }()
	if err := xproto.MapWindowChecked(x, w).Check(); err != nil {
		t.Fatal(err)
	}
	sr.waitRevoked(t, "a window that keeps itself over the bar")
	if l := sr.rp.log(); !strings.Contains(l, "indicator stays covered") || !strings.Contains(l, fmt.Sprintf("0x%x", uint32(w))) {
		t.Errorf("the log does not say the bar stayed covered by 0x%x:\n%s", uint32(w), l)
	}
}

// TestIndicatorStopKey: the person presses Ctrl+Alt+Shift+Esc (xdotool key: on Xvfb, which
// has no physical keyboard, XTEST input counts) and the session is revoked.
func TestIndicatorStopKey(t *testing.T) {
	needDesktop(t)
	need(t, "xdotool", "xprop", "xwininfo")
	d, xenv := sharedDisplay(t)
	sr := startSharedRun(t, d.Name(), append(d.Env(), "HOME="+t.TempDir()), xenv)
	if res := sr.rp.call(t, "get_session", nil); outcomeOf(res) != "completed" {
		t.Fatalf("get_session = %v %q, want completed", outcomeOf(res), text(res))
	}
	if out, err := sr.x("xdotool", "key", "ctrl+alt+shift+Escape"); err != nil {
		t.Fatalf("xdotool key: %v: %s", err, out)
	}
	sr.waitRevoked(t, "the stop key")
}
