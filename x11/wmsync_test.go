package x11_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/host/display"
	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11"
)

// TestWindowManagerCaughtUp: the window manager answers the question in the order of its
// events. Running, openbox answers; stopped (SIGSTOP, the oracle: it cannot have
// answered), the question times out, and the answer comes once it runs again. After a
// keyboard mapping change (xmodmap), WindowManagerCaughtUpWithKeymap asks again, and
// waits while openbox is stopped; with no change since openbox answered, it does not ask.
func TestWindowManagerCaughtUp(t *testing.T) {
	b := open(t)
	if err := b.WindowManagerCaughtUp(t.Context(), 5*time.Second); err != nil {
		t.Fatalf("openbox running: %v", err)
	}
	resume := harness.StopWindowManager(t)
	if err := b.WindowManagerCaughtUpWithKeymap(t.Context(), 300*time.Millisecond); err != nil {
		t.Errorf("no keymap change since openbox answered, yet WindowManagerCaughtUpWithKeymap = %v", err)
	}
	if err := b.WindowManagerCaughtUp(t.Context(), 300*time.Millisecond); !errors.Is(err, x11.ErrTimeout) {
		t.Errorf("openbox stopped: WindowManagerCaughtUp = %v, want ErrTimeout", err)
	}
	resume()
	if err := b.WindowManagerCaughtUp(t.Context(), 5*time.Second); err != nil {
		t.Fatalf("openbox running again: %v", err)
	}

	harness.ChangeKeymap(t)
	resume = harness.StopWindowManager(t)
	// The MappingNotify reaches the backend's event loop asynchronously: until it has,
	// the call may still count the mapping as settled.
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := b.WindowManagerCaughtUpWithKeymap(t.Context(), 200*time.Millisecond)
		if errors.Is(err, x11.ErrTimeout) {
			break
		}
		if err != nil {
			t.Fatalf("openbox stopped after a mapping change: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("openbox stopped after a mapping change, yet WindowManagerCaughtUpWithKeymap kept returning nil")
		}
		time.Sleep(20 * time.Millisecond)
	}
	resume()
	if err := b.WindowManagerCaughtUpWithKeymap(t.Context(), 5*time.Second); err != nil {
		t.Errorf("openbox running again after the mapping change: %v", err)
	}
}

// TestWindowManagerReplaced: fluxbox, which lists _NET_REQUEST_FRAME_EXTENTS but never
// answers it, replaces openbox on a display of the test's own. It answers the configure
// request: after a keymap change WindowManagerCaughtUpWithKeymap returns nil, and while
// fluxbox is stopped the question times out, so the answer was fluxbox's and not the
// server's.
func TestWindowManagerReplaced(t *testing.T) {
	harness.Require(t)
	if _, err := exec.LookPath("fluxbox"); err != nil {
		t.Skip("fluxbox is not installed")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	_, b, env := openWithManager(ctx, t)
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v: %s", name, args, err, out)
		}
	}
	openboxCheck := supportingWMCheck(t, env)
	run("openbox", "--exit")
	fb := exec.Command("fluxbox")
	fb.Env = env
	if err := fb.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fb.Process.Kill(); fb.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c := supportingWMCheck(t, env); c != "" && c != openboxCheck {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("fluxbox did not take over the display")
		}
	}
	run("xmodmap", "-e", "keycode 248 = F33")
	time.Sleep(200 * time.Millisecond) // the MappingNotify reaches the backend
	if err := b.WindowManagerCaughtUpWithKeymap(ctx, 10*time.Second); err != nil {
		t.Fatalf("fluxbox after a keymap change: %v", err)
	}
	if err := fb.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	err := b.WindowManagerCaughtUp(ctx, 300*time.Millisecond)
	fb.Process.Signal(syscall.SIGCONT)
	if !errors.Is(err, x11.ErrTimeout) {
		t.Errorf("fluxbox stopped: WindowManagerCaughtUp = %v, want ErrTimeout", err)
	}
	if err := b.WindowManagerCaughtUp(ctx, 5*time.Second); err != nil {
		t.Errorf("fluxbox continued: %v", err)
	}
}

// TestSilentWindowManager: with no manager the server answers the question at once; a
// client that redirects the root's children and never answers (as a hung manager would)
// is waited for no longer than its first second after a keymap change, and not at all
// the next time.
func TestSilentWindowManager(t *testing.T) {
	harness.Require(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	d, b := openOwnDisplay(ctx, t, display.Options{})
	start := time.Now()
	if err := b.WindowManagerCaughtUp(ctx, 5*time.Second); err != nil || time.Since(start) > time.Second {
		t.Fatalf("no manager: %v after %v, want nil at once", err, time.Since(start))
	}
	// The silent manager: a connection that takes the redirection and reads nothing.
	conn, err := xgb.NewConnDisplay(d.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	root := xproto.Setup(conn).DefaultScreen(conn).Root
	if err := xproto.ChangeWindowAttributesChecked(conn, root, xproto.CwEventMask,
		[]uint32{xproto.EventMaskSubstructureRedirect}).Check(); err != nil {
		t.Fatalf("take the redirection: %v", err)
	}
	env := append(os.Environ(), "DISPLAY="+d.Name(), "HOME="+t.TempDir())
	cmd := exec.Command("xmodmap", "-e", "keycode 248 = F33")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("xmodmap: %v: %s", err, out)
	}
	time.Sleep(200 * time.Millisecond) // the MappingNotify reaches the backend
	start = time.Now()
	if err := b.WindowManagerCaughtUpWithKeymap(ctx, 10*time.Second); !errors.Is(err, x11.ErrUnsupported) {
		t.Fatalf("silent manager after a keymap change: %v, want ErrUnsupported", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("waited %v for a manager that does not answer", took)
	}
	start = time.Now()
	if err := b.WindowManagerCaughtUpWithKeymap(ctx, 10*time.Second); !errors.Is(err, x11.ErrUnsupported) || time.Since(start) > time.Second {
		t.Errorf("asked again: %v after %v, want ErrUnsupported at once", err, time.Since(start))
	}
}

// openWithManager starts a display of the test's own with openbox and opens a backend on
// it; env is the environment of a client of that display.
func openWithManager(ctx context.Context, t *testing.T) (*display.Display, *x11.Backend, []string) {
	t.Helper()
	d, b := openOwnDisplay(ctx, t, display.Options{WindowManager: true})
	if err := b.WindowManagerCaughtUp(ctx, 5*time.Second); err != nil {
		t.Fatalf("openbox: %v", err)
	}
	return d, b, append(os.Environ(), "DISPLAY="+d.Name(), "HOME="+t.TempDir())
}

// openOwnDisplay starts a display of the test's own and opens a backend on it.
func openOwnDisplay(ctx context.Context, t *testing.T, opts display.Options) (*display.Display, *x11.Backend) {
	t.Helper()
	d, err := display.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	t.Setenv("XAUTHORITY", d.XAuthority())
	b, err := x11.Open(ctx, x11.Options{Display: d.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return d, b
}

// supportingWMCheck reads the root's _NET_SUPPORTING_WM_CHECK with xprop ("" when none).
func supportingWMCheck(t *testing.T, env []string) string {
	cmd := exec.Command("xprop", "-root", "_NET_SUPPORTING_WM_CHECK")
	cmd.Env = env
	out, _ := cmd.Output()
	s := string(out)
	if i := strings.Index(s, "# "); i >= 0 {
		return strings.TrimSpace(s[i+2:])
	}
	return ""
}
