package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/display"
)

// compatWM is a window manager TestCompat runs under: the program (and the Debian package
// that ships it), and its command line given a home directory of its own.
type compatWM struct {
	name    string
	prog    string
	pkg     string
	command func(home string) ([]string, error)
}

// i3Config is a minimal i3 configuration: without one, i3 starts its configuration wizard.
// Everything else (focus follows the mouse among them) is i3's default.
const i3Config = "# i3 config file (v4)\nfont pango:monospace 8\n"

func compatWMs() []compatWM {
	plain := func(args ...string) func(string) ([]string, error) {
		return func(string) ([]string, error) { return args, nil }
	}
	return []compatWM{
		{name: "openbox", prog: "openbox", pkg: "openbox", command: plain("openbox")},
		{name: "fluxbox", prog: "fluxbox", pkg: "fluxbox", command: func(home string) ([]string, error) {
			// Without a style overlay of its own, fluxbox runs fbsetbg for the style's
			// wallpaper, which opens an xmessage (and takes the focus) when no wallpaper
			// setter is installed.
			dir := filepath.Join(home, ".fluxbox")
			overlay := filepath.Join(dir, "overlay")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("fluxbox config: %w", err)
			}
			if err := os.WriteFile(overlay, []byte("background: none\n"), 0o644); err != nil {
				return nil, fmt.Errorf("fluxbox overlay: %w", err)
			}
			init := "session.styleOverlay: " + overlay + "\n"
			if err := os.WriteFile(filepath.Join(dir, "init"), []byte(init), 0o644); err != nil {
				return nil, fmt.Errorf("fluxbox init: %w", err)
			}
			return []string{"fluxbox", "-rc", filepath.Join(dir, "init")}, nil
		}},
		{name: "xfwm4", prog: "xfwm4", pkg: "xfwm4", command: plain("xfwm4", "--compositor=off")},
		{name: "metacity", prog: "metacity", pkg: "metacity", command: plain("metacity", "--replace")},
		{name: "mutter", prog: "mutter", pkg: "mutter", command: plain("mutter", "--x11", "--replace")},
		{name: "kwin_x11", prog: "kwin_x11", pkg: "kwin-x11", command: plain("kwin_x11", "--replace")},
		{name: "i3", prog: "i3", pkg: "i3-wm", command: func(home string) ([]string, error) {
			conf := filepath.Join(home, "i3.config")
			if err := os.WriteFile(conf, []byte(i3Config), 0o644); err != nil {
				return nil, fmt.Errorf("write i3 config: %w", err)
			}
			return []string{"i3", "-c", conf}, nil
		}},
	}
}

// compatDesk is the person's desktop of one window manager: Xvfb with a cookie and a
// session bus, the window manager, the person's terminal focused and their pointer parked
// in its corner.
type compatDesk struct {
	t    testing.TB
	d    *display.Display
	home string
	term string // the person's terminal's window id (decimal, as xdotool writes it)
	// focus counts the times the person's focus left their terminal.
	focus *focusWitness
}

// The person's pointer rests here, inside their terminal at the bottom right corner.
const personX, personY = 1270, 790

// startCompatDesk starts the display, the window manager (waiting until it manages the
// screen: _NET_SUPPORTING_WM_CHECK on the root) and the person's terminal.
func startCompatDesk(t testing.TB, wm compatWM) *compatDesk {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := display.Start(ctx, display.Options{SessionBus: true, Width: 1280, Height: 800})
	if err != nil {
		t.Fatalf("start the person's display: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	c := &compatDesk{t: t, d: d, home: t.TempDir()}
	argv, err := wm.command(c.home)
	if err != nil {
		t.Fatal(err)
	}
	wmLog := filepath.Join(c.home, wm.name+".log")
	c.spawn(wmLog, argv...)
	if !waitFor(20*time.Second, func() bool {
		out, err := c.run("xprop", "-root", "_NET_SUPPORTING_WM_CHECK")
		return err == nil && strings.Contains(out, "window id")
	}) {
		log, _ := os.ReadFile(wmLog)
		t.Fatalf("%s never set _NET_SUPPORTING_WM_CHECK on the root window; its output:\n%s", wm.name, log)
	}
	c.spawn("", "xterm", "-title", "person-terminal", "-geometry", "40x6-0-0")
	if !waitFor(10*time.Second, func() bool { c.term = c.search("^person-terminal$"); return c.term != "" }) {
		t.Fatal("the person's terminal never showed")
	}
	c.restore()
	c.focus = watchPersonFocus(t, d.Name(), d.XAuthority(), c.term)
	return c
}

// env is the person's environment: their display, cookie, bus and a home of their own.
func (c *compatDesk) env() []string {
	return append(os.Environ(), append(c.d.Env(), "HOME="+c.home, "XDG_CONFIG_HOME="+filepath.Join(c.home, ".config"),
		"LANG=C.UTF-8", "QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1")...)
}

// spawn starts a program of the person's (output to logFile, or discarded), stopped when
// the test ends.
func (c *compatDesk) spawn(logFile string, argv ...string) *exec.Cmd {
	c.t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = c.env()
	if logFile != "" {
		f, err := os.Create(logFile)
		if err != nil {
			c.t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, f
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("start %v: %v", argv, err)
	}
	c.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func (c *compatDesk) run(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = c.env()
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// search returns the first window whose name matches re, or "".
func (c *compatDesk) search(re string) string {
	out, err := c.run("xdotool", "search", "--name", re)
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(out, "\n")
	return first
}

// restore gives the person's terminal the keyboard focus (until the window manager lets it
// keep it) and parks the pointer in it.
func (c *compatDesk) restore() {
	c.t.Helper()
	focused := func() bool {
		f, err := c.run("xdotool", "getwindowfocus")
		return err == nil && f == c.term
	}
	// Through the window manager first (_NET_ACTIVE_WINDOW, which also raises it); a window
	// manager that declines that right after mapping another window gets XSetInputFocus.
	if !waitFor(10*time.Second, func() bool {
		c.run("xdotool", "windowactivate", c.term)
		if waitFor(300*time.Millisecond, focused) {
			return true
		}
		c.run("xdotool", "windowfocus", c.term)
		return waitFor(200*time.Millisecond, focused)
	}) {
		c.t.Fatal("the person's terminal never kept the focus")
	}
	// Not --sync: xdotool would wait for a motion that never comes when the pointer is
	// already there.
	parked := func() bool {
		loc, err := c.run("xdotool", "getmouselocation")
		return err == nil && strings.HasPrefix(loc, fmt.Sprintf("x:%d y:%d ", personX, personY))
	}
	if !parked() {
		if out, err := c.run("xdotool", "mousemove", fmt.Sprint(personX), fmt.Sprint(personY)); err != nil {
			c.t.Fatalf("xdotool mousemove: %v: %s", err, out)
		}
		if !waitFor(5*time.Second, parked) {
			c.t.Fatal("the person's pointer never came back to its corner")
		}
	}
}

// moved says where the person's pointer and focus went, or "" when both are where they
// left them.
func (c *compatDesk) moved() string {
	var out []string
	loc, err := c.run("xdotool", "getmouselocation")
	if err != nil || !strings.HasPrefix(loc, fmt.Sprintf("x:%d y:%d ", personX, personY)) {
		out = append(out, "pointer at "+strings.Join(strings.Fields(loc)[:min(2, len(strings.Fields(loc)))], " "))
	}
	f, err := c.run("xdotool", "getwindowfocus")
	if err != nil || f != c.term {
		name, _ := c.run("xdotool", "getwindowname", f)
		out = append(out, fmt.Sprintf("focus on %s %q", f, name))
	}
	return strings.Join(out, ", ")
}

// wmSteps is the window manager's row: the agent launches an xterm on the person's
// display, clicks into it and types a line into its cat; after each call, whether the
// person's pointer and focus stayed, and what the result said (focus_restored). Then
// focusClicks.
func wmSteps(t *testing.T, desk *compatDesk, rp *runProc) []compatStep {
	t.Helper()
	file := filepath.Join(t.TempDir(), "agent.txt")
	launch, st := agentCall(t, desk, rp, nil, nil, "launch_app", map[string]any{"name": "xterm",
		"additional_arguments": []string{"-title", "compat-agent-xterm", "-geometry", "80x10+0+0",
			"-e", "sh", "-c", "stty -echo; exec cat > " + file}})
	steps := []compatStep{{Call: launch, Person: launch.Person}}
	ids, _ := st["window_ids"].([]any)
	if !launch.ok() || len(ids) == 0 {
		steps[0].Result = "no window: " + launch.Code + " " + launch.Message
		return steps
	}
	steps[0].Result = "window shown"
	if launch.FocusRestored {
		steps[0].Result += ", focus_restored"
	}
	target := map[string]any{"pid": number(st, "pid"), "window_id": int(ids[0].(float64))}
	time.Sleep(500 * time.Millisecond) // its shell starts cat
	click, _ := agentCall(t, desk, rp, nil, nil, "click", with(target, "x", 100, "y", 60))
	steps = append(steps, compatStep{Call: click, Person: click.Person, Result: contractOf([]compatCall{click})})
	const line = "wm row ✓ Ωk\n"
	typed, _ := agentCall(t, desk, rp, nil, nil, "type_text", with(target, "text", line))
	got, ok := witness(5*time.Second, func() (string, bool) {
		b, _ := os.ReadFile(file)
		return string(b), string(b) == line
	})
	steps = append(steps, compatStep{Call: typed, Person: typed.Person,
		Result: classify([]compatCall{typed}, ok, got == "", got)})
	steps = append(steps, focusClicks(t, desk, rp))
	rp.call(t, "kill_app", map[string]any{"pid": target["pid"]})
	time.Sleep(300 * time.Millisecond)
	desk.restore()
	return steps
}

// focusClickCount is how many clicks focusClicks makes: managers that move the focus late
// did so on a few percent of clicks.
const focusClickCount = 20

// focusClicks clicks focusClickCount times into a terminal of the person's (not the
// focused one) and compares what each result says of the person's focus with the focus
// witness. The step's Person is the first move found after a click (each is undone), its
// Accounts every disagreement.
func focusClicks(t *testing.T, desk *compatDesk, rp *runProc) compatStep {
	t.Helper()
	cmd := desk.spawn("", "xterm", "-title", "person-second-terminal", "-geometry", "60x10+300+200", "-e", "cat")
	var win string
	if !waitFor(10*time.Second, func() bool { win = desk.search("^person-second-terminal$"); return win != "" }) {
		t.Fatal("the person's second terminal never showed")
	}
	id, _ := strconv.Atoi(win)
	target := map[string]any{"pid": cmd.Process.Pid, "window_id": id}
	// Managed (the manager set WM_STATE), and focused if the manager focuses new windows;
	// then the person's first terminal is focused again, through the manager, so that its
	// own idea of the focus is that terminal too.
	if !waitFor(10*time.Second, func() bool {
		out, err := desk.run("xprop", "-id", win, "WM_STATE")
		return err == nil && strings.Contains(out, "Normal")
	}) {
		t.Fatal("the window manager never managed the person's second terminal")
	}
	time.Sleep(500 * time.Millisecond)
	desk.restore()
	time.Sleep(300 * time.Millisecond)
	desk.restore()
	st := compatStep{Person: "kept"}
	left, said := 0, 0
	for i := range focusClickCount {
		c, _ := agentCall(t, desk, rp, nil, nil, "click", with(target, "x", 100+2*i, "y", 60))
		st.Call = c
		if !c.ok() {
			st.Result = fmt.Sprintf("click %d of %d: %s", i+1, focusClickCount, contractOf([]compatCall{c}))
			return st
		}
		if c.Person != "kept" && st.Person == "kept" {
			st.Person = c.Person
		}
		if c.FocusLeft > 0 {
			left++
		}
		if pf, _ := c.Evidence["person_focus"].(string); pf != "" && pf != "kept" {
			said++
		}
		if c.FocusAccount != "" {
			st.Accounts = append(st.Accounts, fmt.Sprintf("click %d: %s", i+1, c.FocusAccount))
			st.AccountsWrong = st.AccountsWrong || c.FocusAccountWrong
		}
		time.Sleep(50 * time.Millisecond)
	}
	st.Result = fmt.Sprintf("%d clicks into another terminal of the person's: the focus left theirs during %d, the results said it moved for %d", focusClickCount, left, said)
	cmd.Process.Kill()
	return st
}
