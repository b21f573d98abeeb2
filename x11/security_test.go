package x11_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
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
