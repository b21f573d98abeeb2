package authze2e

import (
	"context"
	"fmt"
	"image"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/internal/procfs"
	"github.com/cua-host/cua-host/policy"
)

// startSharedHost starts a host that treats the test display as one shared with a person.
func startSharedHost(t testing.TB, opts host.Options) *host.Host {
	t.Helper()
	return startHostOn(t, opts, false)
}

// procStart returns a process's start time from /proc (its identity with the pid), or ""
// when it is gone.
func procStart(pid int) string {
	st, err := procfs.ReadStat(pid)
	if err != nil || st.State == 'Z' {
		return ""
	}
	return strconv.FormatUint(st.StartTime, 10)
}

// displayProcess returns the pid among the test display's processes whose command is comm.
func displayProcess(t testing.TB, comm string) int {
	t.Helper()
	for _, pid := range disp.PIDs() {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		if strings.TrimSpace(string(b)) == comm {
			return pid
		}
	}
	t.Fatalf("no %s among the display's processes %v", comm, disp.PIDs())
	return 0
}

// TestDisplayInfrastructureProtected: on a display the host did not start (so it names none
// of its processes), the worker itself finds the X server (peer credentials of its socket)
// and the window manager (owner of _NET_SUPPORTING_WM_CHECK) and never targets them, in
// every mode. The oracle is /proc: the same processes are still running afterwards.
func TestDisplayInfrastructureProtected(t *testing.T) {
	h := startSharedHost(t, host.Options{Consent: func(context.Context, host.ConsentRequest) host.ConsentDecision {
		return host.ConsentDecision{Granted: true}
	}})
	server, wm := disp.ServerPID(), displayProcess(t, "openbox")
	before := map[int]string{server: procStart(server), wm: procStart(wm)}
	for _, mode := range []authz.Mode{authz.Unrestricted, authz.Standard} {
		s := session(t, h, host.SessionSpec{Label: "infra-" + mode.String(), Mode: mode})
		for _, pid := range []int{server, wm} {
			res := call(t, s, "kill_app", map[string]any{"pid": pid, "grace_ms": 0})
			check(t, fmt.Sprintf("%s kill_app %d", mode, pid), res, authz.CodeSelfTargetDenied)
		}
	}
	// A panel of the desktop shell: a dock-type window makes its process infrastructure.
	panel := startApp(t, appB, "infra-panel")
	if out, err := exec.Command("xprop", "-id", fmt.Sprint(panel.Window), "-f", "_NET_WM_WINDOW_TYPE", "32a",
		"-set", "_NET_WM_WINDOW_TYPE", "_NET_WM_WINDOW_TYPE_DOCK").CombinedOutput(); err != nil {
		t.Fatalf("xprop: %v: %s", err, out)
	}
	before[panel.PID] = procStart(panel.PID)
	time.Sleep(300 * time.Millisecond) // longer than the worker's refresh interval
	s := session(t, h, host.SessionSpec{Label: "infra-panel", Mode: authz.Unrestricted})
	check(t, "kill_app of the panel", call(t, s, "kill_app", map[string]any{"pid": panel.PID, "grace_ms": 0}), authz.CodeSelfTargetDenied)
	check(t, "click on the panel", call(t, s, "click", map[string]any{"pid": panel.PID, "window_id": panel.Window, "x": 10, "y": 10}), authz.CodeSelfTargetDenied)

	time.Sleep(100 * time.Millisecond)
	for pid, start := range before {
		if got := procStart(pid); got != start || start == "" {
			t.Errorf("process %d: start time %q after the calls, want %q (still the same process)", pid, got, start)
		}
	}
}

// clipboardOwner makes a test-owned process (the user's, not the session's) own selection
// sel with text, until the test ends.
func clipboardOwner(t testing.TB, sel, text string) {
	t.Helper()
	cmd := exec.Command("xclip", "-quiet", "-selection", sel, "-i")
	cmd.Env = append(os.Environ(), disp.Env()...)
	cmd.Stdin = strings.NewReader(text)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, _ := exec.Command("xclip", "-o", "-selection", sel).Output()
		if string(out) == text {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("xclip never took the %s selection", sel)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPasteIsAClipboardRead: pasting the user's clipboard into a window the session may
// use (ctrl+v, shift+Insert, a middle click) would let the session read it back from
// that window, so it is decided as a clipboard read: refused in bounded mode without
// resources.clipboard.read, asked for in standard mode. The oracle is the window's own
// event log: no key or button of a refused paste reached it.
func TestPasteIsAClipboardRead(t *testing.T) {
	requireDesktop(t)
	if _, err := exec.LookPath("xclip"); err != nil {
		t.Fatal("xclip is missing (scripts/setup.sh installs it)")
	}
	clipboardOwner(t, "clipboard", "the user's secret")
	target := startApp(t, appA, "paste-target")
	place(t, target, 40, 60)
	var (
		askedMu sync.Mutex // the provider runs on the host's goroutines
		asked   []host.ConsentRequest
	)
	h := startSharedHost(t, host.Options{Consent: func(_ context.Context, req host.ConsentRequest) host.ConsentDecision {
		askedMu.Lock()
		asked = append(asked, req)
		askedMu.Unlock()
		// The person lets the session type into the window, never read the clipboard.
		return host.ConsentDecision{Granted: req.Resource != "clipboard", TTL: time.Minute}
	}})
	tools := []string{"press_key", "hotkey", "click", "mouse_button_down", "mouse_button_up", "drag"}
	pastes := []struct {
		tool string
		args map[string]any
	}{
		{"press_key", map[string]any{"key": "ctrl+v"}},
		{"press_key", map[string]any{"key": "v", "modifier": []string{"ctrl"}}},
		// The reference contract's name for the modifiers: the same paste.
		{"press_key", map[string]any{"key": "v", "modifiers": []string{"ctrl"}}},
		{"press_key", map[string]any{"key": "Insert", "modifiers": []string{"shift"}}},
		{"press_key", map[string]any{"key": "ctrl+shift+V"}},
		{"press_key", map[string]any{"key": "shift+Insert"}},
		{"hotkey", map[string]any{"keys": []string{"shift", "KP_Insert"}}},
		{"click", map[string]any{"x": 50, "y": 50, "button": "middle"}},
		{"mouse_button_down", map[string]any{"x": 50, "y": 50, "button": "middle"}},
		{"drag", map[string]any{"from_x": 50, "from_y": 50, "to_x": 70, "to_y": 60, "button": "middle"}},
	}
	withTarget := func(a map[string]any) map[string]any {
		out := map[string]any{"pid": target.PID, "window_id": target.Window}
		for k, v := range a {
			out[k] = v
		}
		return out
	}

	bounded := session(t, h, host.SessionSpec{Label: "paste-bounded", Mode: authz.Bounded,
		Manifest: []byte(fmt.Sprintf("version: 1\nexpires_after: 1h\nidle_timeout: 30m\nallow: {tools: [%s]}\n"+
			"resources:\n  apps: [{executable: %s}]\n  clipboard: {read: false}\n", strings.Join(tools, ", "), appA))})
	standard := session(t, h, host.SessionSpec{Label: "paste-standard", Mode: authz.Standard})
	for _, p := range pastes {
		res := call(t, bounded, p.tool, withTarget(p.args))
		check(t, fmt.Sprintf("bounded %s %v", p.tool, p.args), res, authz.CodeOutsideManifest)
		res = call(t, standard, p.tool, withTarget(p.args))
		check(t, fmt.Sprintf("standard %s %v", p.tool, p.args), res, authz.CodeAuthorizationDeclined)
	}
	// Ordinary keys and clicks in the same window still go through.
	check(t, "bounded press_key a", call(t, bounded, "press_key", withTarget(map[string]any{"key": "a"})), "")
	check(t, "standard left click", call(t, standard, "click", withTarget(map[string]any{"x": 60, "y": 60})), "")
	userClick(t, target)
	target.waitCount(t, "button_press", 2)
	if n := target.count(t, "key_press"); n != 1 {
		t.Errorf("the window logged %d key presses, want 1 (the plain 'a'; no paste combination)", n)
	}
	for _, e := range target.events(t) {
		if e.Type == "button_press" && e.Button == 2 {
			t.Errorf("a refused middle click reached the window: %+v", e)
		}
	}
	clip := 0
	askedMu.Lock()
	seen := append([]host.ConsentRequest(nil), asked...)
	askedMu.Unlock()
	for _, req := range seen {
		if req.Resource == "clipboard" && req.Operation == "observe" {
			clip++
		}
	}
	if clip == 0 {
		t.Errorf("standard mode never asked for the clipboard; asked %+v", seen)
	}

	// With resources.clipboard.read the same paste is allowed.
	reader := session(t, h, host.SessionSpec{Label: "paste-reader", Mode: authz.Bounded,
		Manifest: []byte(fmt.Sprintf("version: 1\nexpires_after: 1h\nidle_timeout: 30m\nallow: {tools: [press_key]}\n"+
			"resources:\n  apps: [{executable: %s}]\n  clipboard: {read: true}\n", appA))})
	check(t, "bounded reader ctrl+v", call(t, reader, "press_key", withTarget(map[string]any{"key": "ctrl+v"})), "")
	target.waitCount(t, "key_press", 3) // ctrl and v
}

// TestPolicyDecidesOnResolvedTarget: a policy that protects the user's window by pid holds
// for a keyboard call that names no pid at all: the keys would go to the focused window,
// and the policy sees that window as input.target.
func TestPolicyDecidesOnResolvedTarget(t *testing.T) {
	requireDesktop(t)
	user := startApp(t, appB, "policy-user")
	place(t, user, 400, 60)
	userClick(t, user) // the person works in it: it has the focus
	rego := fmt.Sprintf("package cua.policy\n\ndefault allow := false\n\nallow if input.target.pid != %d\n", user.PID)
	layer, err := policy.Parse(policy.KindRego, []policy.File{{Name: "user.rego", Data: []byte(rego)}})
	if err != nil {
		t.Fatal(err)
	}
	h := startSharedHost(t, host.Options{Policy: policy.NewSet(nil, layer)})
	s := session(t, h, host.SessionSpec{Label: "policy-target", Mode: authz.Unrestricted})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"type_text", map[string]any{"text": "rm -rf ~\n"}},
		{"press_key", map[string]any{"key": "Return"}},
		{"type_text", map[string]any{"text": "x", "pid": user.PID}},
	} {
		check(t, c.tool+" into the focused user window", call(t, s, c.tool, c.args), authz.CodePermissionDenied)
	}
	// The policy is no blanket denial: another window is a target it allows.
	other := startApp(t, appA, "policy-other")
	place(t, other, 40, 320)
	check(t, "type_text into another window", call(t, s, "type_text", map[string]any{"text": "ok", "pid": other.PID, "window_id": other.Window}), "")
	other.waitCount(t, "key_press", 2)
	userClick(t, user)
	user.waitCount(t, "button_press", 2)
	if n := user.count(t, "key_press"); n != 0 {
		t.Errorf("the user's window logged %d key presses, want 0", n)
	}
}

// TestPrivateDisplayIsTheSessions: on a display the host created for it, a standard
// session observes the whole display and clicks at desktop coordinates without anyone to
// ask (no consent provider here), while a window of a process it did not launch still
// needs consent and the display's own processes stay protected.
func TestPrivateDisplayIsTheSessions(t *testing.T) {
	other := startApp(t, appB, "private-other")
	place(t, other, 700, 300)
	h := startHost(t, host.Options{})
	s := session(t, h, host.SessionSpec{Label: "private-own", Mode: authz.Standard})
	check(t, "get_desktop_state", call(t, s, "get_desktop_state", map[string]any{"max_dimension": 320}), "")
	wx, wy := 700+150, 300+100
	if !check(t, "desktop click", call(t, s, "click", map[string]any{"x": wx, "y": wy, "scope": "desktop"}), "") {
		return
	}
	other.waitCount(t, "button_press", 1)
	check(t, "type_text into a window it did not launch", call(t, s, "type_text",
		map[string]any{"text": "x", "pid": other.PID, "window_id": other.Window}), authz.CodeAuthorizationRequired)
	check(t, "kill_app of the window manager", call(t, s, "kill_app", map[string]any{"pid": displayProcess(t, "openbox")}), authz.CodeSelfTargetDenied)
	if n := other.count(t, "key_press"); n != 0 {
		t.Errorf("the other window logged %d key presses, want 0", n)
	}
}

// TestProtectedOverrideRedirectWindow: a protected process's override-redirect window (a
// consent dialog drawn outside the window manager) is protected UI for desktop-scope input
// too, although the window manager's client list does not know it: the worker asks the
// server what is on top at the point. Its own event log is the oracle.
func TestProtectedOverrideRedirectWindow(t *testing.T) {
	requireDesktop(t)
	dialog, _ := foreignClient(t, "protected-popup", "-override-redirect", "-x", "500", "-y", "500", "-width", "200", "-height", "100", "-background", "0xff0000")
	h := startHost(t, host.Options{ProtectedPIDs: []int{dialog.PID}})
	s := session(t, h, host.SessionSpec{Label: "or-protected", Mode: authz.Unrestricted})
	for _, tool := range []string{"click", "mouse_button_down", "move_cursor"} {
		res := call(t, s, tool, map[string]any{"x": 600, "y": 550, "scope": "desktop"})
		check(t, tool+" on the protected override-redirect window", res, authz.CodeProtectedUIDenied)
	}
	res := call(t, s, "drag", map[string]any{"from_x": 450, "from_y": 450, "to_x": 600, "to_y": 550, "scope": "desktop"})
	check(t, "drag ending on the protected override-redirect window", res, authz.CodeProtectedUIDenied)
	time.Sleep(200 * time.Millisecond)
	if n := dialog.count(t, "button_press"); n != 0 {
		t.Errorf("the protected window logged %d button presses, want 0", n)
	}
	// A whole-display capture shows the display but paints the protected window grey.
	res = call(t, s, "get_desktop_state", map[string]any{"max_dimension": 1280, "include_windows": false})
	if !check(t, "get_desktop_state", res, "") {
		return
	}
	img := decodeImage(t, res)
	if p, ok := find(img, image.Rect(500, 500, 700, 600), func(c uint32) bool { return c != 0x808080 }); ok {
		t.Errorf("pixel %v of the protected window is %06x in a desktop capture, want the mask #808080", p, rgbAt(img, p))
	}
	if _, ok := find(img, image.Rect(0, 0, 1280, 800), func(c uint32) bool { return c != 0x808080 }); !ok {
		t.Errorf("the whole desktop capture is grey; only the protected window should be")
	}
}
