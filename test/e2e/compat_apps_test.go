package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// compatApp is an application of TestCompat's matrix and how the person starts it.
type compatApp struct {
	name  string   // what the subset picks it by
	label string   // the matrix's row
	progs []string // the programs it needs; the first is the one started
	title string   // a regexp its window's title matches
	// open prepares what the app works on in dir and returns the person's command line and
	// the cell's measurements.
	open func(t *testing.T, desk *compatDesk, dir string) ([]string, cellProbe)
}

// cellProbe measures typing and a click in one running app.
type cellProbe interface {
	// ready waits until the app can take input (beyond its window being mapped).
	ready(t *testing.T) error
	typing(t *testing.T, a *agentOn) *compatMeasure
	click(t *testing.T, a *agentOn) *compatMeasure
}

// agentOn is the agent's side of a cell: its session and the app's window as a target.
type agentOn struct {
	desk   *compatDesk
	rp     *runProc
	cell   *compatCell
	target map[string]any
	frame  compatFrame
}

type compatFrame struct{ X, Y, Width, Height int }

// call makes one call on the app's window and records it in the cell.
func (a *agentOn) call(t *testing.T, name string, kv ...any) compatCall {
	t.Helper()
	c, _ := agentCall(t, a.desk, a.rp, &a.cell.Calls, &a.cell.Moves, name, with(a.target, kv...))
	return c
}

// kwriteSettings turns off kwrite's automatic brackets in the person's configuration: by
// default kwrite inserts "}" when "{" is typed, and the saved file would differ from the
// text sent for a reason that has nothing to do with how the keys arrived.
func kwriteSettings(t *testing.T, home string) {
	t.Helper()
	dir := filepath.Join(home, ".config")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := "[KTextEditor View]\nAuto Brackets=false\n"
	if err := os.WriteFile(filepath.Join(dir, "kwriterc"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
}

// missing returns the first of the app's programs that is not installed, or "".
func (app compatApp) missing() string {
	for _, p := range app.progs {
		if _, err := exec.LookPath(p); err != nil {
			return p
		}
	}
	return ""
}

func compatApps() []compatApp {
	editor := func(name, label string, argv func(file string) []string) compatApp {
		return compatApp{name: name, label: label, progs: []string{name}, title: `note`,
			open: func(t *testing.T, desk *compatDesk, dir string) ([]string, cellProbe) {
				if name == "kwrite" {
					kwriteSettings(t, desk.home)
				}
				file := filepath.Join(dir, "note.txt")
				if err := os.WriteFile(file, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				return argv(file), &editorProbe{file: file}
			}}
	}
	return []compatApp{
		{name: "xterm", label: "xterm", progs: []string{"xterm"}, title: `^compat-xterm$`,
			open: func(t *testing.T, desk *compatDesk, dir string) ([]string, cellProbe) {
				file := filepath.Join(dir, "typed.txt")
				return []string{"xterm", "-title", "compat-xterm", "-geometry", "100x30+0+0", "-e", "sh", "-c",
					"echo " + xtermWord + "; stty -echo; exec cat > " + file}, &xtermProbe{desk: desk, file: file}
			}},
		editor("mousepad", "mousepad (GTK3)", func(f string) []string { return []string{"mousepad", f} }),
		editor("gnome-text-editor", "gnome-text-editor (GTK4)", func(f string) []string { return []string{"gnome-text-editor", "--standalone", f} }),
		editor("kwrite", "kwrite (Qt5)", func(f string) []string { return []string{"kwrite", f} }),
		editor("featherpad", "featherpad (Qt5)", func(f string) []string { return []string{"featherpad", f} }),
		{name: "writer", label: "LibreOffice Writer", progs: []string{"soffice", "unzip"}, title: `note`,
			open: func(t *testing.T, desk *compatDesk, dir string) ([]string, cellProbe) {
				return officeOpen(t, desk, dir, "writer", "odt")
			}},
		{name: "calc", label: "LibreOffice Calc", progs: []string{"soffice", "unzip"}, title: `note`,
			open: func(t *testing.T, desk *compatDesk, dir string) ([]string, cellProbe) {
				return officeOpen(t, desk, dir, "calc", "ods")
			}},
		{name: "chromium", label: "Chromium", progs: []string{"chromium"}, title: `compat page`,
			open: func(t *testing.T, desk *compatDesk, dir string) ([]string, cellProbe) {
				pg := startCompatPage(t)
				return []string{"chromium", "--no-sandbox", "--no-first-run", "--no-default-browser-check",
					"--disable-background-networking", "--disable-component-update", "--disable-sync",
					"--password-store=basic", "--user-data-dir=" + filepath.Join(dir, "profile"),
					"--window-position=0,0", "--window-size=900,640", pg.url}, &pageProbe{pg: pg}
			}},
		{name: "firefox", label: "Firefox ESR", progs: []string{"firefox-esr"}, title: `compat page`,
			open: func(t *testing.T, desk *compatDesk, dir string) ([]string, cellProbe) {
				pg := startCompatPage(t)
				profile := filepath.Join(dir, "profile")
				if err := os.MkdirAll(profile, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(firefoxPrefs), 0o644); err != nil {
					t.Fatal(err)
				}
				return []string{"firefox-esr", "--no-remote", "--new-instance", "--profile", profile,
					"--width", "900", "--height", "640", pg.url}, &pageProbe{pg: pg}
			}},
	}
}

// firefoxPrefs keep a fresh Firefox profile from showing its first-run pages and dialogs.
const firefoxPrefs = `user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.aboutwelcome.enabled", false);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("startup.homepage_welcome_url", "");
user_pref("startup.homepage_welcome_url.additional", "");
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("datareporting.policy.firstRunURL", "");
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("trailhead.firstrun.didSeeAboutWelcome", true);
user_pref("browser.tabs.warnOnClose", false);
user_pref("app.update.enabled", false);
`

// runCell has the person start the app, the agent type into it and click it, and records
// what the witnesses saw.
func runCell(t *testing.T, desk *compatDesk, rp *runProc, app compatApp, cell *compatCell) {
	dir := t.TempDir()
	before := windowIDs(t, rp)
	argv, probe := app.open(t, desk, dir)
	start := time.Now()
	cmd := desk.spawnGroup(filepath.Join(dir, "app.log"), argv...)
	win, err := newWindow(t, rp, before, regexp.MustCompile(app.title), 60*time.Second)
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "app.log"))
		cell.Failed = err.Error()
		t.Fatalf("%s: %v; its output:\n%s", app.label, err, truncateBytes(log, 3000))
	}
	t.Logf("%s: window %q after %v", app.label, win.Title, time.Since(start).Round(time.Millisecond))
	if err := probe.ready(t); err != nil {
		cell.Failed = err.Error()
		t.Fatalf("%s: %v", app.label, err)
	}
	// The person puts the app at the top left, then goes back to their terminal.
	id := fmt.Sprint(win.ID)
	desk.run("xdotool", "windowsize", id, "900", "640")
	desk.run("xdotool", "windowmove", id, "0", "0")
	time.Sleep(700 * time.Millisecond)
	desk.restore()
	t.Logf("%s: ready and placed after %v", app.label, time.Since(start).Round(time.Millisecond))
	if w, ok := findWindow(t, rp, win.ID); ok {
		win = w
	}
	a := &agentOn{desk: desk, rp: rp, cell: cell, frame: win.Frame,
		target: map[string]any{"pid": win.PID, "window_id": int(win.ID)}}
	cell.Typing = probe.typing(t, a)
	t.Logf("%s: typed after %v", app.label, time.Since(start).Round(time.Millisecond))
	// An agent looks before its next step: a second between the two measurements (Writer
	// did not take the keys sent right after its save).
	time.Sleep(time.Second)
	cell.Click = probe.click(t, a)
	t.Logf("%s: clicked after %v", app.label, time.Since(start).Round(time.Millisecond))
	gone := processGone(cmd.Process.Pid)
	killGroup(cmd)
	if gone {
		log, _ := os.ReadFile(filepath.Join(dir, "app.log"))
		cell.Exited = fmt.Sprintf("the app exited during the cell (%v); its output ends: %s", cmd.ProcessState, truncateBytes(log, 400))
		t.Logf("%s: %s", app.label, cell.Exited)
	}
	// The window manager may hand the focus on when the app's window closes: that is not
	// the agent's doing.
	time.Sleep(300 * time.Millisecond)
	desk.restore()
}

// compatWindow is a window as list_windows reports it.
type compatWindow struct {
	ID    uint32      `json:"window_id"`
	PID   int         `json:"pid"`
	Title string      `json:"title"`
	Frame compatFrame `json:"frame"`
}

func listWindows(t *testing.T, rp *runProc) []compatWindow {
	t.Helper()
	_, st := rp.mustCall(t, "list_windows", nil)
	var out struct {
		Windows []struct {
			ID    uint32 `json:"window_id"`
			PID   int    `json:"pid"`
			Title string `json:"title"`
			Frame struct {
				X, Y, Width, Height int
			} `json:"frame"`
		} `json:"windows"`
	}
	remarshal(t, st, &out)
	wins := make([]compatWindow, 0, len(out.Windows))
	for _, w := range out.Windows {
		wins = append(wins, compatWindow{ID: w.ID, PID: w.PID, Title: w.Title, Frame: compatFrame(w.Frame)})
	}
	return wins
}

func windowIDs(t *testing.T, rp *runProc) map[uint32]bool {
	ids := map[uint32]bool{}
	for _, w := range listWindows(t, rp) {
		ids[w.ID] = true
	}
	return ids
}

func findWindow(t *testing.T, rp *runProc, id uint32) (compatWindow, bool) {
	for _, w := range listWindows(t, rp) {
		if w.ID == id {
			return w, true
		}
	}
	return compatWindow{}, false
}

// newWindow waits for the largest window not in before whose title matches title and
// whose pid is known.
func newWindow(t *testing.T, rp *runProc, before map[uint32]bool, title *regexp.Regexp, limit time.Duration) (compatWindow, error) {
	var found compatWindow
	var seen []string
	ok := waitFor(limit, func() bool {
		seen = seen[:0]
		for _, w := range listWindows(t, rp) {
			if before[w.ID] {
				continue
			}
			seen = append(seen, fmt.Sprintf("%q %dx%d pid %d", w.Title, w.Frame.Width, w.Frame.Height, w.PID))
			if title.MatchString(w.Title) && w.PID > 0 && w.Frame.Width*w.Frame.Height > found.Frame.Width*found.Frame.Height {
				found = w
			}
		}
		if found.ID != 0 {
			return true
		}
		time.Sleep(300 * time.Millisecond)
		return false
	})
	if !ok {
		return found, fmt.Errorf("no window titled %s appeared within %v (new windows: %v)", title, limit, seen)
	}
	return found, nil
}

// spawnGroup starts a program of the person's in a process group of its own (a browser's
// or an office suite's helpers go with it).
func (c *compatDesk) spawnGroup(logFile string, argv ...string) *exec.Cmd {
	c.t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = c.env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	f, err := os.Create(logFile)
	if err != nil {
		c.t.Fatal(err)
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("start %v: %v", argv, err)
	}
	c.t.Cleanup(func() { killGroup(cmd) })
	return cmd
}

// killGroup ends the process group cmd leads and reaps cmd.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil || cmd.ProcessState != nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
}

func truncateBytes(b []byte, n int) string {
	if len(b) > n {
		return string(b[len(b)-n:])
	}
	return string(b)
}

// witness polls read until ok or limit passes and returns the last value read.
func witness(limit time.Duration, read func() (string, bool)) (string, bool) {
	var got string
	var ok bool
	waitFor(limit, func() bool { got, ok = read(); return ok })
	return got, ok
}

// editorProbe: a text editor the person opened on an empty file. Typing: the text, then
// ctrl+s; the saved file holds it (GtkSourceView and others add a final newline). Click:
// select all, type 30 numbered lines, click right of a line in the middle of the text
// area, type "X", save: the saved file has the X in the middle (without the click it
// would be after the last line).
type editorProbe struct{ file string }

func (p *editorProbe) ready(t *testing.T) error {
	time.Sleep(2 * time.Second) // it loads the file and draws
	return nil
}

func (p *editorProbe) read() string {
	b, _ := os.ReadFile(p.file)
	return string(b)
}

func (p *editorProbe) typing(t *testing.T, a *agentOn) *compatMeasure {
	calls := []compatCall{
		a.call(t, "type_text", "text", compatSent),
	}
	calls = append(calls, a.call(t, "hotkey", "keys", []string{"ctrl", "s"}))
	got, ok := witness(8*time.Second, func() (string, bool) {
		s := p.read()
		return s, s == compatSent || s == compatSent+"\n"
	})
	return &compatMeasure{Class: classify(calls, ok, got == "", got), Want: compatSent, Got: got,
		Witness: "the saved file", Contract: contractOf(calls)}
}

// clickMark is what the click probes type after the click: a letter without Shift, so
// that the probe measures where the click put the caret, not how capitals arrive.
const clickMark = "q"

// editorLines is the block of numbered lines the click probe types.
func editorLines() string {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "a%02d\n", i)
	}
	return b.String()
}

func (p *editorProbe) click(t *testing.T, a *agentOn) *compatMeasure {
	return p.clickWith(t, a, p.read, "the saved file")
}

// clickWith runs the click probe of an editor whose saved text read returns.
func (p *editorProbe) clickWith(t *testing.T, a *agentOn, read func() string, witnessName string) *compatMeasure {
	block := editorLines()
	calls := []compatCall{a.call(t, "hotkey", "keys", []string{"ctrl", "a"})}
	calls = append(calls, a.call(t, "type_text", "text", block))
	calls = append(calls, a.call(t, "click", "x", a.frame.Width*6/10, "y", a.frame.Height/2))
	calls = append(calls, a.call(t, "type_text", "text", clickMark))
	calls = append(calls, a.call(t, "hotkey", "keys", []string{"ctrl", "s"}))
	inMiddle := func(s string) bool {
		rest := strings.ReplaceAll(s, clickMark, "")
		x := strings.Index(s, clickMark)
		return strings.Count(s, clickMark) == 1 && (rest == block || rest == block+"\n") && x < strings.LastIndex(s, "a30")
	}
	got, ok := witness(10*time.Second, func() (string, bool) { s := read(); return s, inMiddle(s) })
	// What the click itself does is move the caret into the block: a refused click leaves
	// the mark after the last line, where the type_text that follows it puts it.
	moved := func(s string) bool {
		x := strings.Index(s, clickMark)
		return x >= 0 && x < strings.LastIndex(s, "a30")
	}
	return &compatMeasure{Class: classify(calls, ok, !moved(got), markPlace(got)),
		Want: "30 lines a01…a30 with one q inside them", Got: got,
		Witness: witnessName, Contract: contractOf(calls)}
}

// markPlace says where the click probe's mark landed in the saved text: on which line, or
// after the last one (where the caret was before the click), or nowhere.
func markPlace(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	var at []string
	for i, l := range lines {
		if strings.Contains(l, clickMark) {
			at = append(at, fmt.Sprintf("line %d of %d is %q", i+1, len(lines), l))
		}
	}
	if len(at) == 0 {
		return "no " + clickMark + " in " + truncate(s, 40)
	}
	return strings.Join(at, ", ")
}

// xtermWord is the word the person's xterm prints first, for the click probe to select.
const xtermWord = "SELECTME"

// xtermProbe: an xterm whose shell printed a word and runs cat into a file without echo.
// Typing: the text and Return; the file holds them. Click: a double click on the word; the
// person's display's primary selection holds it.
type xtermProbe struct {
	desk *compatDesk
	file string
}

func (p *xtermProbe) ready(t *testing.T) error {
	time.Sleep(500 * time.Millisecond) // its shell starts cat
	return nil
}

func (p *xtermProbe) typing(t *testing.T, a *agentOn) *compatMeasure {
	calls := []compatCall{a.call(t, "type_text", "text", compatSent)}
	calls = append(calls, a.call(t, "press_key", "key", "Return"))
	got, ok := witness(8*time.Second, func() (string, bool) {
		b, _ := os.ReadFile(p.file)
		return string(b), string(b) == compatSent+"\n"
	})
	return &compatMeasure{Class: classify(calls, ok, got == "", got), Want: compatSent + "\n", Got: got,
		Witness: "cat's file", Contract: contractOf(calls)}
}

func (p *xtermProbe) click(t *testing.T, a *agentOn) *compatMeasure {
	// The word is at the start of the first row of 100x30 cells.
	cw, ch := float64(a.frame.Width)/100, float64(a.frame.Height)/30
	calls := []compatCall{a.call(t, "double_click", "x", int(2+3*cw), "y", int(2+ch/2))}
	got, ok := witness(5*time.Second, func() (string, bool) {
		s, _ := p.desk.run("xclip", "-o", "-selection", "primary")
		return s, s == xtermWord
	})
	return &compatMeasure{Class: classify(calls, ok, got != xtermWord, got), Want: xtermWord, Got: got,
		Witness: "the primary selection (xclip)", Contract: contractOf(calls)}
}

// pageProbe: a browser showing the test's page. Typing: into its text field (focused on
// load); the value the page posts. Click: the big button above the field; the page posts
// the click.
type pageProbe struct{ pg *compatPage }

func (p *pageProbe) ready(t *testing.T) error {
	if !waitFor(30*time.Second, p.pg.loaded) {
		return fmt.Errorf("the page never reported that it had loaded")
	}
	time.Sleep(2 * time.Second) // the browser lays its window out
	return nil
}

func (p *pageProbe) typing(t *testing.T, a *agentOn) *compatMeasure {
	calls := []compatCall{a.call(t, "type_text", "text", compatSent)}
	got, ok := witness(8*time.Second, func() (string, bool) { v := p.pg.value(); return v, v == compatSent })
	return &compatMeasure{Class: classify(calls, ok, got == "", got), Want: compatSent, Got: got,
		Witness: "the value the page posted", Contract: contractOf(calls)}
}

func (p *pageProbe) click(t *testing.T, a *agentOn) *compatMeasure {
	// The button spans the page's width and its first 260 pixels, below the browser's
	// toolbars (about 80-90 pixels).
	calls := []compatCall{a.call(t, "click", "x", a.frame.Width/2, "y", 200)}
	got, ok := witness(5*time.Second, func() (string, bool) {
		n := p.pg.clickCount()
		return fmt.Sprintf("%d clicks", n), n == 1
	})
	return &compatMeasure{Class: classify(calls, ok, got == "0 clicks", got), Want: "1 clicks", Got: got,
		Witness: "the clicks the page posted", Contract: contractOf(calls)}
}
