package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/display"
	"github.com/cua-host/cua-host/test/testkit"
)

// TestNestedRefusals: `--display nested` where it cannot work is refused before anything
// starts, saying why: no person's display in $DISPLAY, or no Xephyr (and what to install).
// status names the route either way.
func TestNestedRefusals(t *testing.T) {
	bin := buildBinary(t)
	noXephyr := t.TempDir() // a PATH without Xephyr
	tests := []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{name: "run without a display", env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, args: []string{"run", "--display", "nested"}, code: 2, want: "$DISPLAY names none"},
		{name: "run without Xephyr", env: []string{"PATH=" + noXephyr, "DISPLAY=:99", "HOME=" + t.TempDir()}, args: []string{"run", "--display", "nested"}, code: 2, want: "apt install xserver-xephyr"},
		{name: "call without Xephyr", env: []string{"PATH=" + noXephyr, "DISPLAY=:99", "HOME=" + t.TempDir()}, args: []string{"call", "--display", "nested", "get_screen_size"}, code: 1, want: "apt install xserver-xephyr"},
		{name: "status without Xephyr", env: []string{"PATH=" + noXephyr, "DISPLAY=:99", "HOME=" + t.TempDir()}, args: []string{"status"}, code: 0, want: "nested display:       unavailable: display: Xephyr not found on PATH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			cmd.Env = tt.env
			cmd.Stdin = strings.NewReader("")
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != tt.code || !strings.Contains(string(out), tt.want) {
				t.Errorf("cua-host %v = exit %d:\n%s\nwant exit %d saying %q", tt.args, code, out, tt.code, tt.want)
			}
		})
	}
}

// TestServeNestedDisplay: serve's create_session with display "nested" gives the domain a
// desktop of its own in a window on serve's $DISPLAY; status says it is nested; revoking
// the domain's last session closes the window and stops every process of it.
func TestServeNestedDisplay(t *testing.T) {
	requireDisplayPrograms(t)
	testkit.NeedPrograms(t, "Xephyr", "xdotool")
	bin := buildBinary(t)
	person, err := display.Start(t.Context(), display.Options{WindowManager: true, Width: 1280, Height: 800})
	if err != nil {
		t.Fatal(err)
	}
	defer person.Close()
	t.Setenv("DISPLAY", person.Name())
	t.Setenv("XAUTHORITY", person.XAuthority())
	search := func() string {
		out, _ := exec.Command("xdotool", "search", "--name", "^cua-host: watched$").Output()
		return strings.TrimSpace(string(out))
	}

	p := startServe(t, bin)
	res := p.mustCall("create_session", map[string]any{"label": "watched", "display": "nested"})
	if res["private_display"] != true || res["display"] == person.Name() {
		t.Fatalf("create_session nested = %v, want a private display of its own", res)
	}
	if !waitUntil(5*time.Second, func() bool { return search() != "" }) {
		t.Fatalf("no window of the domain on the person's display")
	}
	st := p.mustCall("status", map[string]any{})
	disps, _ := st["displays"].([]any)
	if len(disps) != 1 || disps[0].(map[string]any)["nested"] != true {
		t.Fatalf("status displays = %v, want one nested display", st["displays"])
	}
	pids := stackPIDs(st)
	p.mustCall("revoke_session", map[string]any{"session": "watched"})
	if left := waitAllGone(pids, filepath.Join(os.TempDir(), "no-such-path"), 5*time.Second); len(left) > 0 {
		t.Errorf("left after the last session was revoked: %v", left)
	}
	if !waitUntil(5*time.Second, func() bool { return search() == "" }) {
		t.Errorf("the domain's window stays on the person's display after its last session ended")
	}
}

func waitUntil(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// TestCloseRelayKeepsAnEarlyRequest: the person closing the nested display's window before
// the session is up (the handler is not set yet) is not lost: the handler runs once when
// it is set; a request after that runs it at once; none runs it twice.
func TestCloseRelayKeepsAnEarlyRequest(t *testing.T) {
	var r closeRelay
	calls := 0
	r.request()
	r.request()
	r.handle(func() { calls++ })
	if calls != 1 {
		t.Fatalf("an early request ran the handler %d times when it was set, want 1", calls)
	}
	r.request()
	if calls != 2 {
		t.Fatalf("a request after the handler was set: %d calls, want 2", calls)
	}

	var quiet closeRelay
	quiet.handle(func() { t.Error("the handler ran without a request") })
}
