package desktop_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/test/a11yenv"
	"github.com/cua-host/cua-host/test/testkit"
	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11/atspi"
)

// menuApp is GTK 3's application demo (package gtk-3-examples): a window with a menu bar
// Application (New, Open, Save, Save As..., Quit), Preferences (Prefer Dark Theme, Hide
// Titlebar when maximized, Color ▸ Red/Green/Blue, Shape ▸ …, Bold) and Help (About).
const menuApp = "gtk3-demo-application"

// startMenuApp starts the demo on bus and waits until its menu bar is in its tree.
func startMenuApp(t *testing.T, reg *tool.Registry, bus *a11yenv.Bus, sess *tool.Session) *a11yenv.App {
	t.Helper()
	why := ""
	if _, err := exec.LookPath(menuApp); err != nil {
		why = menuApp + " is missing (package gtk-3-examples; run scripts/setup.sh)"
	}
	testkit.Require(t, why)
	app := a11yenv.Start(t, bus, nil, menuApp)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, st := windowState(t, reg, sess, map[string]any{"pid": app.PID, "window_id": app.Window, "include_screenshot": false})
		for _, e := range st.Elements {
			if e.Role == "menu" && e.Name == "Help" {
				return app
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s shows no Help menu: %+v", menuApp, st.Elements)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// actionJSON is an action result's structured content, decoded strictly in the contract's
// closed shape.
type actionJSON struct {
	Effect   string `json:"effect"`
	Route    string `json:"route"`
	Delivery *struct {
		Mode           string `json:"mode"`
		DeliveredCount *int   `json:"delivered_count"`
	} `json:"delivery"`
	Evidence   []struct{ Kind string } `json:"evidence"`
	Escalation *struct {
		Target string `json:"target"`
		Reason string `json:"reason"`
	} `json:"escalation"`
}

func decodeAction(t *testing.T, r *tool.Result) actionJSON {
	t.Helper()
	b, err := json.Marshal(r.Structured)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	var a actionJSON
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("structured %s: %v", b, err)
	}
	return a
}

// popups lists the viewable override-redirect windows named after the application: its
// open menus, as xwininfo sees them.
func popups(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(harness.Command(t, "xwininfo", "-root", "-children"), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[0], "0x") || !strings.Contains(line, `"`+menuApp+`"`) {
			continue
		}
		info, err := exec.Command("xwininfo", "-id", f[0]).Output()
		if err == nil && strings.Contains(string(info), "IsViewable") && strings.Contains(string(info), "Override Redirect State: yes") {
			out = append(out, f[0])
		}
	}
	return out
}

// waitPopups waits until the application has an open menu (open) or none.
func waitPopups(t *testing.T, open bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); (len(popups(t)) > 0) != open; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("open menus %v, want open %v", popups(t), open)
		}
	}
}

// windowsNamed lists the visible windows whose name matches the regular expression re.
func windowsNamed(re string) []string {
	out, _ := exec.Command("xdotool", "search", "--onlyvisible", "--name", re).Output()
	return strings.Fields(string(out))
}

// pixel reads one pixel of a window with ImageMagick's import.
func pixel(t *testing.T, window uint32, x, y int) string {
	t.Helper()
	out := harness.Command(t, "import", "-window", strconv.FormatUint(uint64(window), 10), "-crop", fmt.Sprintf("1x1+%d+%d", x, y), "txt:-")
	if i := strings.Index(out, "srgb("); i >= 0 {
		return strings.TrimSpace(out[i:])
	}
	t.Fatalf("import: %q", out)
	return ""
}

func brightness(t *testing.T, srgb string) int {
	t.Helper()
	var r, g, b int
	if _, err := fmt.Sscanf(srgb, "srgb(%d,%d,%d)", &r, &g, &b); err != nil {
		t.Fatalf("pixel %q: %v", srgb, err)
	}
	return (r + g + b) / 3
}

// TestInvokeMenuThroughTools: menu paths of a real GTK application, resolved level by
// level, with effects seen outside cua-host: the theme's colours in the window's pixels
// (ImageMagick), an About window and a second main window (xdotool), no menu left open
// (xwininfo); the pointer and the active window of another application stay put.
func TestInvokeMenuThroughTools(t *testing.T) {
	reg, _, bus := a11ySetup(t, atspi.Options{})
	sess := ownSession("m", "unrestricted")
	app := startMenuApp(t, reg, bus, sess)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 200, Height: 150}) // takes the focus
	harness.Command(t, "xdotool", "mousemove", "--window", fmt.Sprint(xl.Window), "30", "40")
	px, py, active := a11yenv.Pointer(t)
	invoke := func(path ...string) (*tool.Result, error) {
		t.Helper()
		return callAs(t, reg, sess, "invoke_menu", map[string]any{"pid": app.PID, "window_id": app.Window, "path": path, "session": "m"})
	}

	// Preferences > Prefer Dark Theme: a check item; the window turns dark.
	_, _, w, h := a11yenv.Geometry(t, app.Window)
	before := brightness(t, pixel(t, app.Window, w/2, h-20))
	r, err := invoke("Preferences", "Prefer Dark Theme")
	if err != nil {
		t.Fatalf("invoke_menu: %v", err)
	}
	t.Logf("%s; details %v", r.Content[0].Text, r.Details)
	a := decodeAction(t, r)
	if a.Effect != "unverifiable" || a.Route != "accessibility" || a.Delivery == nil || a.Delivery.Mode != "background" ||
		a.Delivery.DeliveredCount == nil || *a.Delivery.DeliveredCount != 2 || a.Escalation != nil {
		t.Fatalf("invoke_menu = %+v", a)
	}
	details, _ := r.Details.(map[string]any)
	if details["menus_closed"] != true || details["window_id"] != app.Window {
		t.Errorf("details = %v", details)
	}
	var after int
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if after = brightness(t, pixel(t, app.Window, w/2, h-20)); after < before-100 || time.Now().After(deadline) {
			break
		}
	}
	if after >= before-100 {
		t.Errorf("the window did not turn dark: brightness %d before, %d after", before, after)
	}
	if p := popups(t); len(p) != 0 {
		t.Errorf("menus still open after the item ran: %v", p)
	}
	if x, y, a := a11yenv.Pointer(t); x != px || y != py || a != active {
		t.Errorf("pointer (%d,%d) active %s after invoke_menu; was (%d,%d) active %s", x, y, a, px, py, active)
	}

	// Labels match ignoring case when nothing matches exactly; a second window opens.
	r, err = invoke(" application ", "NEW")
	if err != nil {
		t.Fatalf("invoke_menu: %v", err)
	}
	steps, _ := json.Marshal(r.Details.(map[string]any)["steps"])
	if !strings.Contains(string(steps), `"matched_by":"case_insensitive"`) || !strings.Contains(string(steps), `"name":"New"`) {
		t.Errorf("steps = %s", steps)
	}
	for deadline := time.Now().Add(5 * time.Second); len(windowsNamed("^Application Class$")) < 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Application > New opened no second window: %v", windowsNamed("^Application Class$"))
		}
	}

	// Three levels down: a radio item in a submenu.
	r, err = invoke("Preferences", "Color", "Blue")
	if err != nil {
		t.Fatalf("invoke_menu 3 levels: %v", err)
	}
	if a := decodeAction(t, r); *a.Delivery.DeliveredCount != 3 {
		t.Errorf("3 levels: %+v", a)
	}
	if p := popups(t); len(p) != 0 {
		t.Errorf("menus still open after Color > Blue: %v", p)
	}

	// Help > About: the About window appears.
	if _, err := invoke("Help", "About"); err != nil {
		t.Fatalf("invoke_menu Help About: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); len(windowsNamed("^About")) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Help > About opened no About window")
		}
	}
}

// TestInvokeMenuRefusals: a path that does not fit the menus as they are is refused,
// naming the segment and what its level held; menus opened on the way are closed again
// (xwininfo) and nothing is invoked (no new window, per xdotool).
func TestInvokeMenuRefusals(t *testing.T) {
	reg, _, bus := a11ySetup(t, atspi.Options{})
	sess := ownSession("r", "unrestricted")
	app := startMenuApp(t, reg, bus, sess)
	// The oracle sees an open menu: F10 opens the first one, Escape closes it.
	harness.Command(t, "xdotool", "windowactivate", "--sync", fmt.Sprint(app.Window))
	time.Sleep(200 * time.Millisecond)
	harness.Command(t, "xdotool", "key", "F10")
	waitPopups(t, true)
	harness.Command(t, "xdotool", "key", "Escape")
	waitPopups(t, false)
	zen := a11yenv.Zenity(t, bus, "--entry", "--title", "no menu bar", "--text", "x")
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 200, Height: 150})
	mainWindows := len(windowsNamed("^Application Class$"))
	tests := []struct {
		name string
		args map[string]any
		code authz.Code
		msg  []string
		// opened: the failure came past the first menu, which was opened to look: an
		// error result, not a refusal.
		opened bool
	}{
		{"missing first", map[string]any{"path": []string{"File", "Quit"}}, authz.CodeMenuPathNotFound,
			[]string{`path[0] "File" in the menu bar: no entry is named so`, `"Application", "Preferences", "Help"`}, false},
		{"missing third", map[string]any{"path": []string{"Preferences", "Color", "Purple"}}, authz.CodeMenuPathNotFound,
			[]string{`path[2] "Purple" in the menu of path[1]`, `"Red", "Green", "Blue"`}, true},
		{"submenu last", map[string]any{"path": []string{"Preferences", "Color"}}, authz.CodeMenuPathNotFound,
			[]string{`path[1] "Color"`, "opens a submenu"}, true},
		{"item before the end", map[string]any{"path": []string{"Application", "New", "Window"}}, authz.CodeMenuPathNotFound,
			[]string{`path[1] "New"`, "has no submenu"}, true},
		{"menu bar entry alone", map[string]any{"path": []string{"Help"}}, authz.CodeMenuPathNotFound,
			[]string{`path[0] "Help"`, "opens a submenu"}, false},
		{"window without menu bar", map[string]any{"pid": zen.PID, "window_id": zen.Window, "path": []string{"File"}}, authz.CodeUnsupported,
			[]string{"no showing menu bar"}, false},
		{"window without accessibility", map[string]any{"pid": xl.PID, "window_id": xl.Window, "path": []string{"File"}}, authz.CodeUnsupported,
			[]string{"not registered on the accessibility bus"}, false},
		{"another pid's window", map[string]any{"pid": app.PID, "window_id": xl.Window, "path": []string{"Help", "About"}}, authz.CodeWindowNotFound,
			[]string{"belongs to pid"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"pid": app.PID, "window_id": app.Window}
			for k, v := range tc.args {
				args[k] = v
			}
			r, err := callAs(t, reg, sess, "invoke_menu", args)
			var msg string
			if tc.opened {
				st, _ := r.Structured.(map[string]any)
				if err != nil || !r.IsError || st["error_code"] != string(tc.code) {
					t.Fatalf("invoke_menu(%v) = %v, %v; want an error result %s (menus were opened)", args, r, err, tc.code)
				}
				msg = r.Content[0].Text
			} else {
				var ref *authz.Refusal
				if !asRefusal(err, &ref) || ref.Code != tc.code {
					t.Fatalf("invoke_menu(%v) = %v, %v; want %s", args, r, err, tc.code)
				}
				msg = ref.Message
			}
			for _, m := range tc.msg {
				if !strings.Contains(msg, m) {
					t.Errorf("message %q lacks %q", msg, m)
				}
			}
			if p := popups(t); len(p) != 0 {
				t.Errorf("menus left open after the refusal: %v", p)
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(windowsNamed("^Application Class$")); n != mainWindows || len(windowsNamed("^About")) != 0 {
		t.Errorf("a refused path had an effect: %d main windows (was %d), About windows %v", n, mainWindows, windowsNamed("^About"))
	}
}

// TestInvokeMenuPasteNeedsTheClipboard: a menu entry named Paste reads the clipboard into
// the application, so invoking it is refused (before any menu opens) while another program
// owns the clipboard and the session may not read it — as activating a Paste element is.
func TestInvokeMenuPasteNeedsTheClipboard(t *testing.T) {
	reg, _, bus := a11ySetup(t, atspi.Options{})
	sess := ownSession("paste", "unrestricted")
	app := startMenuApp(t, reg, bus, sess)
	// Another program (xclip, which stays to serve it) owns the clipboard.
	cmd := exec.Command("xclip", "-selection", "clipboard", "-i")
	cmd.Stdin = strings.NewReader("the person's secret")
	if err := cmd.Run(); err != nil {
		t.Fatalf("xclip: %v", err)
	}
	before := harness.Command(t, "xdotool", "search", "--onlyvisible", "--pid", fmt.Sprint(app.PID), "")
	for _, path := range [][]string{{"Edit", "Paste"}, {"Edit", "_Paste"}, {"Edit", "paste special…"}} {
		_, err := callAs(t, reg, sess, "invoke_menu", map[string]any{"pid": app.PID, "window_id": app.Window, "path": path})
		if code := refusalCode(err); code != authz.CodeAuthorizationRequired {
			t.Errorf("invoke_menu %q with a foreign clipboard = %v, want authorization_required", path, err)
		}
	}
	if after := harness.Command(t, "xdotool", "search", "--onlyvisible", "--pid", fmt.Sprint(app.PID), ""); after != before {
		t.Errorf("windows of the app changed (a menu opened?): %q, then %q", before, after)
	}
}
