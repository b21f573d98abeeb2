package x11_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/testkit"
	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11"
)

// run launches argv through b, waits for it to exit and returns its exit code.
func run(t *testing.T, b *x11.Backend, argv ...string) int {
	t.Helper()
	l, err := b.Launch(t.Context(), x11.LaunchOptions{Name: argv[0], Args: argv[1:], WindowTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("Launch(%q): %v", argv, err)
	}
	if !l.Exited || l.ExitCode == nil {
		t.Fatalf("Launch(%q) = %+v, want it to exit without a window", argv, l)
	}
	return *l.ExitCode
}

// TestUntrustedLaunches: a program launched by a backend with UntrustedLaunches is an
// untrusted X client: it sees no XTEST, cannot read a trusted window's image and types
// nothing (the oracle is xevlog's event log); the same programs launched by a trusted
// backend can. Closing the backend revokes the authorization.
func TestUntrustedLaunches(t *testing.T) {
	harness.Require(t)
	testkit.NeedPrograms(t, "xwd", "xdpyinfo", "sh", "grep", "cp")
	xl := harness.StartXevlog(t, harness.XevlogOptions{Title: "trusted-target"})
	trusted := open(t)
	activate(t, trusted, xl.Window)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	untrusted, err := x11.Open(ctx, x11.Options{UntrustedLaunches: true})
	if err != nil {
		t.Fatalf("Open(UntrustedLaunches): %v", err)
	}
	defer untrusted.Close()
	dir := t.TempDir()
	xwd := []string{"xwd", "-silent", "-id", fmt.Sprint(xl.Window), "-out", "/dev/null"}
	hasXTest := []string{"sh", "-c", "xdpyinfo -queryExtensions | grep -q XTEST"}
	if code := run(t, trusted, xwd...); code != 0 {
		t.Fatalf("trusted xwd of a trusted window exited %d, want 0", code)
	}
	if code := run(t, trusted, hasXTest...); code != 0 {
		t.Fatalf("a trusted client sees no XTEST (exit %d)", code)
	}
	if code := run(t, untrusted, xwd...); code == 0 {
		t.Errorf("untrusted xwd of a trusted window exited 0, want a failure")
	}
	if code := run(t, untrusted, hasXTest...); code == 0 {
		t.Errorf("an untrusted client sees XTEST")
	}
	if _, err := exec.LookPath("xdotool"); err == nil {
		xl.Reset()
		if code := run(t, untrusted, "xdotool", "type", "--delay", "1", "pwned"); code == 0 {
			t.Errorf("untrusted xdotool type exited 0, want a failure")
		}
		time.Sleep(200 * time.Millisecond)
		if evs := harness.Filter(xl.Events(), "key_press"); len(evs) != 0 {
			t.Errorf("an untrusted client typed into a trusted window: %+v", evs)
		}
	}
	// The authorization dies with the backend: a copy of it no longer connects.
	saved := filepath.Join(dir, "copy.xauth")
	if code := run(t, untrusted, "sh", "-c", `cp "$XAUTHORITY" "$0" && xdpyinfo >/dev/null`, saved); code != 0 {
		t.Fatalf("untrusted xdpyinfo exited %d, want 0", code)
	}
	untrusted.Close()
	out, err := exec.Command("sh", "-c", `XAUTHORITY="$0" xdpyinfo`, saved).CombinedOutput()
	if err == nil {
		t.Errorf("a revoked untrusted authorization still connects: %s", out)
	} else if !strings.Contains(string(out), "unable to open display") {
		t.Logf("xdpyinfo with a revoked authorization: %v: %s", err, out)
	}
}

// TestUntrustedXtermSelects: an xterm launched as an untrusted X client survives what
// ended it before (an X error ends xterm): a triple-click that selects a line, whose
// default action writes the root window's CUT_BUFFER0, and a trusted client asking for
// PRIMARY. Selecting and pasting inside it still work: a middle-click pastes the line it
// selected into its cat, and the file cat writes is the witness. Nothing it selects
// reaches PRIMARY.
func TestUntrustedXtermSelects(t *testing.T) {
	harness.Require(t)
	testkit.NeedPrograms(t, "xterm", "xdotool", "xclip")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	b, err := x11.Open(ctx, x11.Options{UntrustedLaunches: true})
	if err != nil {
		t.Fatalf("Open(UntrustedLaunches): %v", err)
	}
	defer b.Close()
	file := filepath.Join(t.TempDir(), "pasted")
	l, err := b.Launch(ctx, x11.LaunchOptions{Name: "xterm", Args: []string{"-title", "untrusted-xterm", "-geometry", "60x8+0+0",
		"-e", "sh", "-c", `echo selected-line; stty -echo; exec cat > "$0"`, file}, WindowTimeout: 10 * time.Second})
	if err != nil || len(l.Windows) == 0 {
		t.Fatalf("launch xterm: %+v, %v", l, err)
	}
	win := fmt.Sprint(l.Windows[0].ID)
	alive := func(after string) {
		t.Helper()
		time.Sleep(300 * time.Millisecond)
		if syscall.Kill(l.PID, 0) != nil {
			t.Fatalf("the untrusted xterm ended after %s", after)
		}
	}
	xdo := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("xdotool", args...).CombinedOutput(); err != nil {
			t.Fatalf("xdotool %v: %v: %s", args, err, out)
		}
	}
	time.Sleep(500 * time.Millisecond) // the shell prints the line
	// The line is the first row; a triple-click selects it.
	xdo("mousemove", "--window", win, "40", "8", "click", "--repeat", "3", "--delay", "80", "1")
	alive("a triple-click")
	out, _ := exec.CommandContext(ctx, "timeout", "3", "xclip", "-o", "-selection", "primary").Output()
	if strings.Contains(string(out), "selected-line") {
		t.Errorf("the untrusted xterm's selection reached PRIMARY: %q", out)
	}
	alive("a trusted client asked for PRIMARY")
	xdo("mousemove", "--window", win, "40", "60", "click", "2")
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, _ := os.ReadFile(file)
		if strings.Contains(string(got), "selected-line") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a middle-click did not paste the selected line into the xterm: its cat wrote %q", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	alive("a paste")
}
