package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

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
