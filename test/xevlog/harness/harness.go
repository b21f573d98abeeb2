// Package harness runs desktop tests against a private display: TestMain starts Xvfb and
// openbox through host/display, builds the xevlog oracle, and tests start xevlog windows
// and read what they logged. When a program is missing the tests skip with the reason,
// unless CI is set, in which case they fail.
package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/display"
	"github.com/cua-host/cua-host/test/testkit"
)

// Programs the desktop tests need.
var Programs = []string{"Xvfb", "openbox", "xterm", "xdotool", "wmctrl", "xprop", "xdpyinfo", "xclip", "xmodmap"}

var (
	disp       *display.Display
	skipReason string
	binDir     string
	xevlogPath string
)

// Main starts the private display, runs the tests and stops everything, then checks for
// leaked goroutines. Use it as: func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }.
func Main(m *testing.M) int { return testkit.CheckLeaks(run(m)) }

func run(m *testing.M) int {
	if skipReason = testkit.Missing(Programs...); skipReason != "" {
		return m.Run()
	}
	var err error
	binDir, err = os.MkdirTemp("", "cua-harness-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(binDir)
	xevlogPath = filepath.Join(binDir, "xevlog")
	if err := BuildXevlog(xevlogPath); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if disp, err = StartDisplay(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer disp.Close()
	return m.Run()
}

// BuildXevlog builds the xevlog oracle to path.
func BuildXevlog(path string) error {
	build := exec.Command("go", "build", "-o", path, "github.com/cua-host/cua-host/test/xevlog")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build xevlog: %w", err)
	}
	return nil
}

// StartDisplay starts a private 1280×800 display with openbox and points this process's
// DISPLAY and XAUTHORITY at it. The caller closes it.
func StartDisplay() (*display.Display, error) {
	d, err := testkit.StartDisplay(display.Options{WindowManager: true, Width: 1280, Height: 800})
	if err != nil {
		return nil, err
	}
	testkit.SetEnv(d)
	return d, nil
}

// Require skips (or, with CI set, fails) the test when the display could not be set up.
func Require(t testing.TB) {
	t.Helper()
	testkit.Require(t, skipReason)
}

// Display returns the running private display.
func Display() *display.Display { return disp }

// Event is one xevlog line.
type Event struct {
	Type string `json:"type"`
	// Device and Source are the master device and slave of an XI2 event (XI2 mode).
	Device  int    `json:"device"`
	Source  int    `json:"source"`
	Window  uint32 `json:"window"`
	Button  int    `json:"button"`
	X       int    `json:"x"`
	Y       int    `json:"y"`
	RootX   int    `json:"root_x"`
	RootY   int    `json:"root_y"`
	State   uint16 `json:"state"`
	Keycode int    `json:"keycode"`
	Keysym  uint32 `json:"keysym"`
	Char    string `json:"char"`
	// Mode and Detail are a focus event's (xi_focus_in, xi_focus_out, focus_in, focus_out).
	Mode   int `json:"mode"`
	Detail int `json:"detail"`
	Width  int `json:"width"`
	Height int `json:"height"`
	PID    int `json:"pid"`
	// Time is the X server's timestamp of a key, button press or still event, in
	// milliseconds.
	Time uint32 `json:"time"`
}

// Xevlog is a running xevlog window.
type Xevlog struct {
	PID    int
	Window uint32
	cmd    *exec.Cmd

	// mu guards events.
	mu     sync.Mutex
	events []Event
	done   chan struct{}
}

// XevlogOptions configure StartXevlog.
type XevlogOptions struct {
	Title         string
	Width, Height int
	Color         string
	// XKB makes xevlog announce XKB (xevlog -xkb): event states are then the sending
	// keyboard's, as toolkits see them.
	XKB bool
	// XI2 makes xevlog log the pointer's XInput2 events with the master device of each
	// (xevlog -xi2) instead of its core events.
	XI2 bool
	// BusyAfterKey makes xevlog repaint its window for this long after each key press and
	// then log a "still" event (xevlog -busy-after-key).
	BusyAfterKey time.Duration
	// TakeFocus, when not zero, makes xevlog a globally active client that sets the
	// focus itself this long after the window manager's WM_TAKE_FOCUS, and answers
	// _NET_WM_PING (xevlog -take-focus).
	TakeFocus time.Duration
	// XI2Focus makes xevlog log every master keyboard's XI2 focus events on its window
	// (xevlog -xi2-focus).
	XI2Focus bool
}

// StartXevlog runs xevlog and waits until its window is mapped. It is stopped at cleanup.
func StartXevlog(t testing.TB, o XevlogOptions) *Xevlog {
	t.Helper()
	Require(t)
	if o.Width == 0 {
		o.Width, o.Height = 400, 300
	}
	if o.Color == "" {
		o.Color = "ffffff"
	}
	if o.Title == "" {
		o.Title = t.Name()
	}
	args := []string{"-title", o.Title, "-width", fmt.Sprint(o.Width), "-height", fmt.Sprint(o.Height), "-color", o.Color}
	if o.XKB {
		args = append(args, "-xkb")
	}
	if o.XI2 {
		args = append(args, "-xi2")
	}
	if o.BusyAfterKey > 0 {
		args = append(args, "-busy-after-key", o.BusyAfterKey.String())
	}
	if o.XI2Focus {
		args = append(args, "-xi2-focus")
	}
	if o.TakeFocus > 0 {
		args = append(args, "-take-focus", o.TakeFocus.String())
	}
	cmd := exec.Command(xevlogPath, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	x := &Xevlog{PID: cmd.Process.Pid, cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(x.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var ev Event
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				x.mu.Lock()
				x.events = append(x.events, ev)
				x.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-x.done
		_ = cmd.Wait()
	})
	evs := x.WaitFor(t, 10*time.Second, func(evs []Event) bool { return len(Filter(evs, "ready")) > 0 })
	x.Window = Filter(evs, "ready")[0].Window
	return x
}

// Events returns a copy of what xevlog logged so far.
func (x *Xevlog) Events() []Event {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]Event(nil), x.events...)
}

// Reset forgets the events logged so far.
func (x *Xevlog) Reset() {
	x.mu.Lock()
	x.events = x.events[:0]
	x.mu.Unlock()
}

// WaitFor polls the log until ok holds or timeout passes (then the test fails).
func (x *Xevlog) WaitFor(t testing.TB, timeout time.Duration, ok func([]Event) bool) []Event {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		evs := x.Events()
		if ok(evs) {
			return evs
		}
		if time.Now().After(deadline) {
			t.Fatalf("xevlog: condition not met within %v; events: %+v", timeout, evs)
		}
		select {
		case <-x.done:
			if evs := x.Events(); ok(evs) {
				return evs
			}
			t.Fatalf("xevlog exited; events: %+v", x.Events())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Filter returns the events whose type is one of types.
func Filter(evs []Event, types ...string) []Event {
	var out []Event
	for _, e := range evs {
		for _, ty := range types {
			if e.Type == ty {
				out = append(out, e)
			}
		}
	}
	return out
}

// Command runs an oracle program on the private display and returns its stdout.
func Command(t testing.TB, name string, args ...string) string {
	t.Helper()
	Require(t)
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s %v: %v: %s", name, args, err, stderr)
	}
	return string(out)
}
