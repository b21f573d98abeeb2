package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/display"
	"github.com/cua-host/cua-host/host/personui"
	"github.com/cua-host/cua-host/test/xevlog/harness"
)

// nestedTitle is the title of the nested display's window `cua-host run` opens on the
// person's display (its session's label is mcp).
const nestedTitle = "cua-host: mcp"

// person is the person's desktop of these tests: Xvfb with a cookie and openbox, their
// terminal focused and their pointer parked in a corner. Oracles: xdotool and xwininfo
// on it, with the person's cookie.
type person struct {
	t    testing.TB
	d    *display.Display
	term string // the focused terminal's window id (decimal, as xdotool writes it)
}

func startPerson(t testing.TB) *person {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := display.Start(ctx, display.Options{WindowManager: true, Width: 1280, Height: 800})
	if err != nil {
		t.Fatalf("start the person's display: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	p := &person{t: t, d: d}
	term := exec.Command("xterm", "-title", "person-terminal", "-geometry", "50x8+820+560")
	term.Env = p.env()
	if err := term.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { term.Process.Kill(); term.Wait() })
	if !waitFor(10*time.Second, func() bool {
		p.term = p.search("^person-terminal$")
		return p.term != ""
	}) {
		t.Fatal("the person's terminal never showed")
	}
	// The window manager may still be taking the new window on: activate it until it has
	// the focus and keeps it.
	if !waitFor(10*time.Second, func() bool {
		p.run("xdotool", "windowactivate", "--sync", p.term)
		time.Sleep(100 * time.Millisecond)
		f, err := p.run("xdotool", "getwindowfocus")
		return err == nil && f == p.term
	}) {
		t.Fatal("the person's terminal never kept the focus")
	}
	p.xdo("mousemove", "--sync", "1270", "790")
	return p
}

func (p *person) env() []string { return append(os.Environ(), p.d.Env()...) }

func (p *person) run(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = p.env()
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func (p *person) xdo(args ...string) string {
	p.t.Helper()
	out, err := p.run("xdotool", args...)
	if err != nil {
		p.t.Fatalf("xdotool %v: %v: %s", args, err, out)
	}
	return out
}

// search returns the first window whose name matches re, or "".
func (p *person) search(re string) string {
	out, err := p.run("xdotool", "search", "--name", re)
	first, _, _ := strings.Cut(out, "\n")
	if err != nil {
		return ""
	}
	return first
}

// untouched fails the test unless the person's pointer and focus are where they left them.
func (p *person) untouched(when string) {
	p.t.Helper()
	if loc := p.xdo("getmouselocation"); !strings.HasPrefix(loc, "x:1270 y:790 ") {
		p.t.Errorf("%s: the person's pointer is at %q, want x:1270 y:790", when, loc)
	}
	if f := p.xdo("getwindowfocus"); f != p.term {
		p.t.Errorf("%s: the person's keyboard focus is on %s, want their terminal %s", when, f, p.term)
	}
}

// tree is xwininfo -root -tree of the person's display.
func (p *person) tree() string {
	p.t.Helper()
	out, err := p.treeOrErr()
	if err != nil {
		p.t.Fatalf("%v", err)
	}
	return out
}

// treeOrErr is tree for a goroutine other than the test's, which must not call Fatalf:
// xwininfo fails when a window goes away while it walks the tree.
func (p *person) treeOrErr() (string, error) {
	out, err := p.run("xwininfo", "-root", "-tree")
	if err != nil {
		return "", fmt.Errorf("xwininfo: %v: %s", err, out)
	}
	return out, nil
}

// nestedWindow waits for the nested display's window on the person's display and returns
// its id and the root position of its inside.
func (p *person) nestedWindow() (id string, x, y int) {
	p.t.Helper()
	if !waitFor(10*time.Second, func() bool { id = p.search("^" + nestedTitle + "$"); return id != "" }) {
		p.t.Fatalf("no window %q on the person's display:\n%s", nestedTitle, p.tree())
	}
	for _, l := range strings.Split(p.xdo("getwindowgeometry", "--shell", id), "\n") {
		if v, ok := strings.CutPrefix(l, "X="); ok {
			x, _ = strconv.Atoi(v)
		}
		if v, ok := strings.CutPrefix(l, "Y="); ok {
			y, _ = strconv.Atoi(v)
		}
	}
	return id, x, y
}

// startNested runs `cua-host run --display nested` for the person, in unrestricted mode
// (no consent question gets in the way of launching a terminal with a command line).
func startNested(t testing.TB, p *person, extra ...string) *runProc {
	t.Helper()
	env := append(p.d.Env(), "HOME="+t.TempDir(), "LANG=C.UTF-8")
	args := append([]string{"--display", "nested", "--screen", "800x600", "--mode", "unrestricted", "--dangerously-bypass-approvals"}, extra...)
	return startRunEnv(t, env, args...)
}

// TestNestedDisplay: `cua-host run --display nested` gives the agent a desktop of its own
// in a window on the person's display. The agent launches a terminal there and types a
// command that writes a file; the person's pointer and focus never move; a shell of the
// session can neither connect to the person's display nor see cua-host's processes; the
// worker holds the nested display's cookie, not the person's; the nested screen follows
// the window's size; and when the agent goes, the window goes. Oracles: the files the
// shell writes, xdotool and xwininfo on the person's display, /proc.
func TestNestedDisplay(t *testing.T) {
	needDesktop(t)
	need(t, "Xephyr", "xdotool", "xwininfo", "xdpyinfo")
	p := startPerson(t)
	p.untouched("before the agent starts")
	start := time.Now()
	rp := startNested(t, p)
	t.Logf("run --display nested serving in %v", time.Since(start).Round(time.Millisecond))
	win, _, _ := p.nestedWindow()
	if tree := p.tree(); !strings.Contains(tree, `"`+nestedTitle+`"`) || !strings.Contains(tree, "cua-host: agent sessions active") {
		t.Errorf("the person's display lacks the nested window or the session indicator:\n%s", tree)
	}
	p.untouched("after the nested display appeared")

	_, health := rp.mustCall(t, "health_report", nil)
	nested, _ := health["display"].(string)
	if nested == "" || nested == p.d.Name() || health["private_display"] != true {
		t.Fatalf("health_report: display %q private %v, want the nested display, private", nested, health["private_display"])
	}
	// The worker was given the nested display and its cookie only.
	workerPID := number(health, "pid")
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", workerPID))
	if err != nil {
		t.Fatal(err)
	}
	wenv := strings.Split(string(environ), "\x00")
	if !contains(wenv, "DISPLAY="+nested) || contains(wenv, "XAUTHORITY="+p.d.XAuthority()) {
		t.Errorf("the worker's environment names DISPLAY/XAUTHORITY %q, want the nested display's only", grep(wenv, "DISPLAY=", "XAUTHORITY="))
	}

	_, launched := rp.mustCall(t, "launch_app", map[string]any{"name": "xterm",
		"additional_arguments": []string{"-title", "nested-terminal", "-e", "bash", "--norc", "--noprofile"}})
	pid := number(launched, "pid")
	ids, _ := launched["window_ids"].([]any)
	if pid <= 0 || len(ids) == 0 {
		t.Fatalf("launch_app xterm = %v", launched)
	}
	target := map[string]any{"pid": pid, "window_id": int(ids[0].(float64))}
	with := func(kv ...any) map[string]any {
		m := map[string]any{"pid": target["pid"], "window_id": target["window_id"]}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	dir := t.TempDir()
	// The host runs as cua-host run's process; from inside the sandbox neither it nor the
	// person's display may be reachable.
	cmd := fmt.Sprintf("xdpyinfo -display %s >/dev/null 2>&1; echo $? > %s/xdpyinfo; test -e /proc/%d; echo $? > %s/host; echo done > %s/out",
		p.d.Name(), dir, rp.cmd.Process.Pid, dir, dir)
	rp.mustCall(t, "click", with("x", 100, "y", 60))
	rp.mustCall(t, "type_text", with("text", cmd))
	rp.mustCall(t, "press_key", with("key", "Return"))
	var got []byte
	if !waitFor(15*time.Second, func() bool {
		got, _ = os.ReadFile(filepath.Join(dir, "out"))
		return string(got) == "done\n"
	}) {
		t.Fatalf("the nested terminal did not run the command: out = %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "xdpyinfo")); strings.TrimSpace(string(b)) == "0" || len(b) == 0 {
		t.Errorf("xdpyinfo -display %s inside the session exited %q, want a failure", p.d.Name(), b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "host")); strings.TrimSpace(string(b)) != "1" {
		t.Errorf("test -e /proc/<cua-host> inside the session exited %q, want 1 (not visible)", b)
	}
	p.untouched("after the agent clicked and typed")

	// The nested screen follows the window.
	p.xdo("windowsize", "--sync", win, "900", "640")
	if !waitFor(5*time.Second, func() bool {
		_, size := rp.mustCall(t, "get_screen_size", nil)
		return number(size, "width") == 900 && number(size, "height") == 640
	}) {
		_, size := rp.mustCall(t, "get_screen_size", nil)
		t.Errorf("get_screen_size after resizing the window = %v, want 900x640", size)
	}
	shot, _ := rp.mustCall(t, "get_desktop_state", map[string]any{})
	if b := decodePNG(t, shot).Bounds(); b.Dx() != 900 || b.Dy() != 640 {
		t.Errorf("get_desktop_state screenshot is %dx%d, want 900x640", b.Dx(), b.Dy())
	}
	p.untouched("after the resize")

	if err := rp.close(); err != nil {
		t.Errorf("cua-host run exit: %v", err)
	}
	if tree := p.tree(); strings.Contains(tree, `"`+nestedTitle+`"`) {
		t.Errorf("the nested window stays on the person's display after the agent left:\n%s", tree)
	}
	p.untouched("after the agent left")
}

// TestNestedTakeOver: while the person's pointer is in the nested window, or the window
// has their keyboard focus, the agent's input is refused person_active and nothing of the
// agent's reaches the nested display (an xevlog window there logs no button or key), while
// the person's own keys do; once the person leaves, the next call lands. Oracles: xevlog's log, xdotool on the person's display.
func TestNestedTakeOver(t *testing.T) {
	needDesktop(t)
	need(t, "Xephyr", "xdotool", "xwininfo")
	xevlog := buildXevlog(t)
	p := startPerson(t)
	rp := startNested(t, p, "--indicator=false")
	win, wx, wy := p.nestedWindow()

	logPath := filepath.Join(t.TempDir(), "events.jsonl")
	_, launched := rp.mustCall(t, "launch_app", map[string]any{"name": xevlog,
		"additional_arguments": []string{"-title", "nested-log", "-width", "300", "-height", "200", "-out", logPath}})
	ids, _ := launched["window_ids"].([]any)
	if len(ids) == 0 {
		t.Fatalf("launch_app xevlog = %v", launched)
	}
	log := &eventLog{path: logPath}
	log.wait(t, "the xevlog window's ready line", func(evs []map[string]any) bool { return count(evs, "ready") > 0 })
	target := map[string]any{"pid": number(launched, "pid"), "window_id": int(ids[0].(float64)), "x": 40, "y": 40}
	key := map[string]any{"pid": target["pid"], "window_id": target["window_id"], "text": "x"}
	inputs := func(evs []map[string]any) int {
		return count(evs, "button_press") + count(evs, "button_release") + count(evs, "key_press") + count(evs, "key_release")
	}
	// refusedUntil calls tool until it is refused person_active (the host sees the person
	// within its poll), and fails the test when one lands instead.
	refused := func(what, tool string, args map[string]any) {
		t.Helper()
		before := inputs(log.events())
		deadline := time.Now().Add(3 * time.Second)
		for {
			res := rp.call(t, tool, args)
			if refusalCode(t, res) == "person_active" {
				if outcomeOf(res) != "not_started" {
					t.Errorf("%s: person_active with outcome %v, want not_started", what, outcomeOf(res))
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s was not refused person_active: %s", what, tool, text(res))
			}
			before = inputs(log.events())
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		if n := inputs(log.events()); n != before {
			t.Errorf("%s: the nested display's client saw %d button or key events after the refusal", what, n-before)
		}
	}
	lands := func(what, tool string, args map[string]any, ev string) {
		t.Helper()
		before := count(log.events(), ev)
		deadline := time.Now().Add(3 * time.Second)
		for {
			res := rp.call(t, tool, args)
			if outcomeOf(res) == "completed" && !res.IsError {
				break
			}
			if code := refusalCode(t, res); code != "person_active" || time.Now().After(deadline) {
				t.Fatalf("%s: %s = %s, want it to land", what, tool, text(res))
			}
			time.Sleep(50 * time.Millisecond)
		}
		log.wait(t, what+": "+ev, func(evs []map[string]any) bool { return count(evs, ev) > before })
	}

	lands("before the person steps in", "click", target, "button_press")
	// The person's pointer in the window (not moved by the agent: xdotool on their display).
	p.xdo("mousemove", "--sync", strconv.Itoa(wx+700), strconv.Itoa(wy+500))
	refused("pointer in the nested window", "click", target)
	refused("pointer in the nested window", "type_text", key)
	if res := rp.call(t, "get_desktop_state", map[string]any{}); outcomeOf(res) != "completed" {
		t.Errorf("observing while the person is active: %s", text(res))
	}
	p.xdo("mousemove", "--sync", "1270", "790")
	lands("after the pointer left", "click", target, "button_press")
	// The person's keyboard focus in the window.
	p.xdo("windowactivate", "--sync", win)
	refused("focus in the nested window", "type_text", key)
	// Meanwhile the person types there themselves: their keys reach the nested display.
	keys := count(log.events(), "key_press")
	p.xdo("type", "--delay", "20", "ok")
	log.wait(t, "the person's keys", func(evs []map[string]any) bool { return count(evs, "key_press") >= keys+2 })
	p.xdo("windowactivate", "--sync", p.term)
	lands("after the focus went back", "type_text", key, "key_press")
	p.untouched("at the end")
}

// TestNestedGoesWithTheSession: the person's Stop on the session indicator (on their own
// display), or their closing the window, revokes the session and closes the nested window
// and everything in it, while the agent's calls are still answered; and when the host dies
// outright (SIGKILL) the window and Xephyr go with it. Oracles: xwininfo and xdotool on the person's display,
// the process table.
func TestNestedGoesWithTheSession(t *testing.T) {
	needDesktop(t)
	need(t, "Xephyr", "xdotool", "xwininfo", "wmctrl")
	p := startPerson(t)

	rp := startNested(t, p)
	p.nestedWindow()
	_, launched := rp.mustCall(t, "launch_app", map[string]any{"name": "xterm", "additional_arguments": []string{"-title", "nested-terminal"}})
	app := number(launched, "pid")
	var bar string
	if !waitFor(10*time.Second, func() bool { bar = p.search("^cua-host: agent sessions active"); return bar != "" }) {
		t.Fatalf("no session indicator on the person's display:\n%s", p.tree())
	}
	geo := p.xdo("getwindowgeometry", "--shell", bar)
	var bx, by, bw, bh int
	for _, l := range strings.Split(geo, "\n") {
		k, v, _ := strings.Cut(l, "=")
		n, _ := strconv.Atoi(v)
		switch k {
		case "X":
			bx = n
		case "Y":
			by = n
		case "WIDTH":
			bw = n
		case "HEIGHT":
			bh = n
		}
	}
	time.Sleep(personui.ArmDelay + 300*time.Millisecond)
	p.xdo("mousemove", "--sync", strconv.Itoa(bx+bw-20), strconv.Itoa(by+bh/2), "click", "1")
	stopped := time.Now()
	if !waitFor(5*time.Second, func() bool { return p.search("^"+nestedTitle+"$") == "" }) {
		t.Fatalf("the nested window stays after Stop:\n%s", p.tree())
	}
	t.Logf("Stop → nested window gone in %v", time.Since(stopped).Round(time.Millisecond))
	p.xdo("mousemove", "--sync", "1270", "790") // the person's hand goes back to their corner
	if !waitFor(5*time.Second, func() bool { return processGone(app) }) {
		t.Errorf("the terminal of the nested display (pid %d) survived Stop", app)
	}
	if res := rp.call(t, "get_screen_size", nil); refusalCode(t, res) != "authorization_revoked" {
		t.Errorf("a call after Stop: %s, want authorization_revoked", text(res))
	}
	if err := rp.close(); err != nil {
		t.Errorf("cua-host run exit after Stop: %v", err)
	}

	// The person closes the window through their window manager: that is Stop too.
	rp = startNested(t, p, "--indicator=false")
	p.nestedWindow()
	if out, err := p.run("wmctrl", "-c", nestedTitle); err != nil {
		t.Fatalf("wmctrl -c: %v: %s", err, out)
	}
	if !waitFor(5*time.Second, func() bool { return p.search("^"+nestedTitle+"$") == "" }) {
		t.Errorf("the nested window stays after the person closed it:\n%s", p.tree())
	}
	if res := rp.call(t, "get_screen_size", nil); refusalCode(t, res) != "authorization_revoked" {
		t.Errorf("a call after the person closed the window: %s, want authorization_revoked", text(res))
	}
	rp.close()

	// The host killed: its connection to the person's display goes, and the window with it;
	// Xephyr dies with its parent.
	rp = startNested(t, p, "--indicator=false")
	p.nestedWindow()
	_, health := rp.mustCall(t, "health_report", nil)
	xephyr := xephyrOf(t, rp.cmd.Process.Pid)
	if err := rp.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	rp.close()
	if !waitFor(5*time.Second, func() bool { return p.search("^"+nestedTitle+"$") == "" }) {
		t.Errorf("the nested window stays after the host was killed:\n%s", p.tree())
	}
	if !waitFor(5*time.Second, func() bool { return processGone(xephyr) && processGone(number(health, "pid")) }) {
		t.Errorf("Xephyr (pid %d) or the worker survived the host", xephyr)
	}
	p.untouched("at the end")
}

// xephyrOf returns the pid of the Xephyr child of pid.
func xephyrOf(t testing.TB, pid int) int {
	t.Helper()
	out, err := exec.Command("pgrep", "-P", strconv.Itoa(pid), "-x", "Xephyr").Output()
	n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || n == 0 {
		t.Fatalf("no Xephyr child of %d: %v %q", pid, err, out)
	}
	return n
}

// processGone reports whether pid no longer runs (absent, or a zombie).
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z")
}

// eventLog reads an xevlog -out file.
type eventLog struct{ path string }

func (l *eventLog) events() []map[string]any {
	f, err := os.Open(l.path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			out = append(out, ev)
		}
	}
	return out
}

func (l *eventLog) wait(t testing.TB, what string, ok func([]map[string]any) bool) {
	t.Helper()
	if !waitFor(5*time.Second, func() bool { return ok(l.events()) }) {
		t.Fatalf("xevlog never logged %s: %v", what, l.events())
	}
}

func count(evs []map[string]any, typ string) int {
	n := 0
	for _, ev := range evs {
		if ev["type"] == typ {
			n++
		}
	}
	return n
}

var (
	xevlogOnce sync.Once
	xevlogPath string
	xevlogErr  error
)

// buildXevlog builds the xevlog oracle once per run.
func buildXevlog(t testing.TB) string {
	t.Helper()
	xevlogOnce.Do(func() {
		xevlogPath = filepath.Join(filepath.Dir(cuaHost), "xevlog")
		xevlogErr = harness.BuildXevlog(xevlogPath)
	})
	if xevlogErr != nil {
		t.Fatal(xevlogErr)
	}
	return xevlogPath
}

// grep returns the entries of list that start with one of the prefixes.
func grep(list []string, prefixes ...string) []string {
	var out []string
	for _, v := range list {
		for _, p := range prefixes {
			if strings.HasPrefix(v, p) {
				out = append(out, v)
			}
		}
	}
	return out
}

// TestNestedIndicatorSaysWhoHasControl: the session indicator on the person's display says
// when the person has taken over the nested display, and stops saying it when they leave;
// the agent's click is refused in between and lands after. Oracles: the indicator's title
// read with xdotool on the person's display, which xdotool also moves the pointer on.
func TestNestedIndicatorSaysWhoHasControl(t *testing.T) {
	needDesktop(t)
	need(t, "Xephyr", "xdotool", "xwininfo")
	p := startPerson(t)
	rp := startNested(t, p)
	_, wx, wy := p.nestedWindow()
	const taken = "; you have control)"
	barTitle := func() string {
		out, _ := p.run("xdotool", "search", "--name", "^cua-host: agent sessions active")
		id, _, _ := strings.Cut(out, "\n")
		if id == "" {
			return ""
		}
		name, _ := p.run("xdotool", "getwindowname", id)
		return strings.TrimSpace(name)
	}
	shows := func(what string, want func(string) bool) {
		t.Helper()
		var title string
		if !waitFor(5*time.Second, func() bool { title = barTitle(); return want(title) }) {
			t.Errorf("%s: the indicator's title is %q", what, title)
		}
	}
	shows("before the person steps in", func(s string) bool {
		return strings.Contains(s, "mcp (unrestricted)") && !strings.Contains(s, taken)
	})
	// Below the bar, which sits at the top centre of the person's screen.
	p.xdo("mousemove", "--sync", strconv.Itoa(wx+200), strconv.Itoa(wy+400))
	shows("with the person's pointer in the nested window", func(s string) bool { return strings.Contains(s, "mcp (unrestricted"+taken) })
	if code := refusalCode(t, rp.call(t, "click", map[string]any{"x": 10, "y": 10, "scope": "desktop"})); code != "person_active" {
		t.Errorf("the agent's click while the person has control: refusal %q, want person_active", code)
	}
	p.xdo("mousemove", "--sync", "1270", "790")
	shows("after the person left", func(s string) bool {
		return strings.Contains(s, "mcp (unrestricted)") && !strings.Contains(s, taken)
	})
	if res := rp.call(t, "click", map[string]any{"x": 10, "y": 10, "scope": "desktop"}); outcomeOf(res) != "completed" {
		t.Errorf("the agent's click after the person left: %s", text(res))
	}
}
