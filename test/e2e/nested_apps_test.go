package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// appText is what the agent types into the apps of TestNestedApps: 100 characters with
// capitals, digits, spaces, punctuation and letters from outside the Latin keymap.
const appText = "Grüße aus Köln! Ωμέγα = 42; THE Quick Brown fox #7 jumps (a+b)*c <= 3.14 & 100% ok? [x_y] ~end~ :-))"

// TestNestedApps: on a nested display (`cua-host run --display nested` on the person's
// Xvfb), the agent's own programs work as on a private display. A GTK4 editor
// (gnome-text-editor) takes 100 mixed characters typed by the agent and saves them: the
// file on disk holds exactly the text. Chromium shows a page of the test's own HTTP server
// whose text field posts its value on every input event: the last value posted is exactly
// the text. A Qt editor (featherpad) saves the same 100 characters exactly. In an xterm, a
// drag selects a line: the xterm and its shell survive it, and the
// nested display's primary selection holds the line; then the same 100 characters typed
// into its shell's cat reach the file exactly. After every step the person's pointer
// and focus are where they left them. Oracles: the file, the test's HTTP server, xclip and
// xwininfo on the nested display with its own cookie, /proc, xdotool on the person's display.
func TestNestedApps(t *testing.T) {
	needDesktop(t)
	need(t, "Xephyr", "xdotool", "xwininfo")
	if n := utf8.RuneCountInString(appText); n != 100 {
		t.Fatalf("appText has %d characters, want 100", n)
	}
	p := startPerson(t)
	rp := startNested(t, p, "--indicator=false")
	p.nestedWindow()
	p.untouched("after the nested display appeared")
	nested := nestedDisplayOf(t, rp)

	// Both editors end a saved file with a newline of their own (GtkSourceView's
	// implicit trailing newline, featherpad's setting).
	t.Run("gtk4-editor", func(t *testing.T) { editorSaves(t, rp, p, "gnome-text-editor", "--standalone") })
	t.Run("qt-editor", func(t *testing.T) { editorSaves(t, rp, p, "featherpad") })

	t.Run("chromium", func(t *testing.T) {
		chromium := needApp(t, "chromium")
		page := startTypingPage(t)
		start := time.Now()
		// By its path: chromium's desktop entry takes URLs only, and these are options.
		// As root, Chromium runs only without its own sandbox.
		target := launchIn(t, rp, chromium, "--no-sandbox", "--no-first-run", "--no-default-browser-check",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--password-store=basic", "--user-data-dir="+t.TempDir(), page.url)
		if !waitFor(20*time.Second, func() bool { _, ok := page.last(); return ok }) {
			t.Fatalf("the page never reported that its text field has the keyboard focus")
		}
		t.Logf("chromium window and page in %v", time.Since(start).Round(time.Millisecond))
		p.untouched("after launching chromium")
		rp.mustCall(t, "type_text", with(target, "text", appText))
		var got string
		if !waitFor(10*time.Second, func() bool { got, _ = page.last(); return got == appText }) {
			t.Errorf("the page's text field posted %q, want %q", got, appText)
		}
		p.untouched("after typing into chromium")
		rp.mustCall(t, "kill_app", map[string]any{"pid": target["pid"]})
	})

	t.Run("xterm-selection", func(t *testing.T) {
		need(t, "xclip")
		target := launchIn(t, rp, "xterm", "-title", "nested-selection", "-geometry", "80x24",
			"-e", "bash", "--norc", "--noprofile")
		term := target["pid"].(int)
		shell := descendant(t, term, "bash")
		// The line the drag selects: the output of the command the agent types, at the
		// start of the terminal's second row.
		const line = "Selected by a drag 42"
		rp.mustCall(t, "type_text", with(target, "text", "echo '"+line+"'"))
		rp.mustCall(t, "press_key", with(target, "key", "Return"))
		p.untouched("after typing into the terminal")
		// The cell size from the window's size (80x24 cells inside a 2-pixel border).
		w, h := nested.windowSize(t, target["window_id"].(int))
		cw, ch := float64(w-4)/80, float64(h-4)/24
		y := 2 + 1.5*ch
		time.Sleep(300 * time.Millisecond) // the shell prints the line
		rp.mustCall(t, "drag", with(target, "from_x", 2+0.3*cw, "from_y", y,
			"to_x", 2+(float64(len(line))+0.5)*cw, "to_y", y, "steps", 10))
		p.untouched("after the drag")
		var sel string
		if !waitFor(5*time.Second, func() bool {
			sel, _ = nested.run("xclip", "-o", "-selection", "primary")
			return sel == line
		}) {
			t.Errorf("the nested display's primary selection holds %q, want %q", sel, line)
		}
		for what, pid := range map[string]int{"xterm": term, "its shell": shell} {
			if err := exec.Command("kill", "-0", strconv.Itoa(pid)).Run(); err != nil || processGone(pid) {
				t.Errorf("%s (pid %d) died after the selection: %v", what, pid, err)
			}
		}
		// The same 100 characters as into the other programs, through cat into a file.
		file := filepath.Join(t.TempDir(), "typed.txt")
		rp.mustCall(t, "type_text", with(target, "text", "cat > "+file+"\n"))
		rp.mustCall(t, "type_text", with(target, "text", appText+"\n"))
		rp.mustCall(t, "hotkey", with(target, "keys", []string{"ctrl", "d"}))
		var got []byte
		if !waitFor(10*time.Second, func() bool {
			got, _ = os.ReadFile(file)
			return string(got) == appText+"\n"
		}) {
			t.Errorf("the terminal's cat wrote %q, want %q", got, appText+"\n")
		}
		p.untouched("after typing 100 characters into the terminal")
	})
	p.untouched("at the end")
}

// editorSaves launches the editor prog with args and an empty file on the nested display,
// types appText into it and saves it with ctrl+s: the file must then hold appText and
// the newline the editor adds, and the person's pointer and focus stay where they were.
func editorSaves(t *testing.T, rp *runProc, p *person, prog string, args ...string) {
	needApp(t, prog)
	file := filepath.Join(t.TempDir(), "note.txt")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	target := launchIn(t, rp, prog, append(args, file)...)
	t.Logf("%s window in %v", prog, time.Since(start).Round(time.Millisecond))
	p.untouched("after launching " + prog)
	rp.mustCall(t, "type_text", with(target, "text", appText))
	p.untouched("after typing into " + prog)
	rp.mustCall(t, "hotkey", with(target, "keys", []string{"ctrl", "s"}))
	want := appText + "\n"
	var got []byte
	if !waitFor(10*time.Second, func() bool {
		got, _ = os.ReadFile(file)
		return string(got) == want
	}) {
		t.Errorf("the file %s saved holds %q, want %q", prog, got, want)
	}
	p.untouched("after saving")
	rp.mustCall(t, "kill_app", map[string]any{"pid": target["pid"]})
}

// needApp returns the path of prog; it skips the test when prog is missing, unless CI is
// set: then it is a failure (scripts/setup.sh installs it).
func needApp(t *testing.T, prog string) string {
	t.Helper()
	path, err := exec.LookPath(prog)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (scripts/setup.sh installs it)", prog)
		}
		t.Skipf("%s is not installed (scripts/setup.sh installs it)", prog)
	}
	return path
}

// launchIn launches name with args through launch_app and returns its pid and first
// window as a call's target.
func launchIn(t *testing.T, rp *runProc, name string, args ...string) map[string]any {
	t.Helper()
	_, launched := rp.mustCall(t, "launch_app", map[string]any{"name": name, "additional_arguments": args})
	ids, _ := launched["window_ids"].([]any)
	pid := number(launched, "pid")
	if pid <= 0 || len(ids) == 0 {
		t.Fatalf("launch_app %s = %v", name, launched)
	}
	t.Logf("launch_app %s: window drawn %v after %v ms", name, launched["window_drawn"], launched["drawn_after_ms"])
	return map[string]any{"pid": pid, "window_id": int(ids[0].(float64))}
}

// with returns target with the key-value pairs kv added.
func with(target map[string]any, kv ...any) map[string]any {
	m := map[string]any{}
	for k, v := range target {
		m[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// descendant waits for a process named comm below pid and returns its pid.
func descendant(t *testing.T, pid int, comm string) int {
	t.Helper()
	var found int
	var walk func(int) bool
	walk = func(p int) bool {
		out, _ := exec.Command("pgrep", "-P", strconv.Itoa(p)).Output()
		for _, f := range strings.Fields(string(out)) {
			c, _ := strconv.Atoi(f)
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", c)); err == nil && strings.TrimSpace(string(b)) == comm {
				found = c
				return true
			}
			if walk(c) {
				return true
			}
		}
		return false
	}
	if !waitFor(10*time.Second, func() bool { return walk(pid) }) {
		t.Fatalf("no %s process below pid %d", comm, pid)
	}
	return found
}

// nestedDisplay is the nested display as its own clients reach it: its name and cookie,
// read from the worker's environment.
type nestedDisplay struct{ env []string }

func nestedDisplayOf(t *testing.T, rp *runProc) *nestedDisplay {
	t.Helper()
	_, health := rp.mustCall(t, "health_report", nil)
	name, _ := health["display"].(string)
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", number(health, "pid")))
	if err != nil {
		t.Fatal(err)
	}
	auth := grep(strings.Split(string(environ), "\x00"), "XAUTHORITY=")
	if name == "" || len(auth) != 1 {
		t.Fatalf("the nested display %q, the worker's cookie %q", name, auth)
	}
	return &nestedDisplay{env: []string{"DISPLAY=" + name, auth[0]}}
}

func (n *nestedDisplay) run(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), n.env...)
	out, err := cmd.Output()
	return string(out), err
}

// windowSize returns the width and height of window id, from xwininfo.
func (n *nestedDisplay) windowSize(t *testing.T, id int) (w, h int) {
	t.Helper()
	out, err := n.run("xwininfo", "-id", strconv.Itoa(id))
	if err != nil {
		t.Fatalf("xwininfo -id %d: %v", id, err)
	}
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "Width: "); ok {
			w, _ = strconv.Atoi(v)
		}
		if v, ok := strings.CutPrefix(l, "Height: "); ok {
			h, _ = strconv.Atoi(v)
		}
	}
	if w <= 4 || h <= 4 {
		t.Fatalf("xwininfo -id %d: no size in %q", id, out)
	}
	return w, h
}

// typingPage is a page served on 127.0.0.1 whose focused text field posts its value to
// the server on every input event (and once, empty, when the field has the keyboard focus).
type typingPage struct {
	url string

	mu     sync.Mutex // mu guards the fields below
	posted bool
	seq    int // the highest sequence number posted: the requests may arrive out of order
	value  string
}

const typingPageHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>typing page</title></head>
<body><textarea id="f" autofocus rows="6" cols="60"></textarea>
<script>
const f = document.getElementById("f");
let seq = 0;
const post = () => fetch("/value", {method: "POST", body: ++seq + "\n" + f.value});
f.addEventListener("input", post);
// Once the browser's window has the keyboard focus and the field has the page's, the
// page says so: keys sent before that may go nowhere.
const ready = setInterval(() => {
  if (document.hasFocus() && document.activeElement === f) { clearInterval(ready); post(); }
}, 50);
window.addEventListener("load", () => f.focus());
</script></body></html>`

func startTypingPage(t *testing.T) *typingPage {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pg := &typingPage{url: "http://" + l.Addr().String() + "/"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, typingPageHTML)
	})
	mux.HandleFunc("POST /value", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		num, value, _ := strings.Cut(string(b), "\n")
		seq, err := strconv.Atoi(num)
		if err != nil {
			return
		}
		pg.mu.Lock()
		if seq > pg.seq {
			pg.posted, pg.seq, pg.value = true, seq, value
		}
		pg.mu.Unlock()
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return pg
}

// last returns the value the page posted last, and whether it posted at all.
func (pg *typingPage) last() (string, bool) {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	return pg.value, pg.posted
}
