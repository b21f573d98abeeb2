package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// compatReport is what TestCompat writes to $CUA_COMPAT_OUT and scripts/compatdoc renders
// into docs/apps.md.
type compatReport struct {
	Started  time.Time     `json:"started"`
	Full     bool          `json:"full"`
	Sent     string        `json:"sent"` // the text typed into every app
	WMs      []compatWMRow `json:"window_managers"`
	Cells    []compatCell  `json:"cells"`
	Duration string        `json:"duration"`
}

// compatWMRow is the window manager's own row: an xterm the agent launches on the person's
// display, a click and keys into it.
type compatWMRow struct {
	WM      string       `json:"wm"`
	Skipped string       `json:"skipped,omitempty"`
	Failed  string       `json:"failed,omitempty"`
	Steps   []compatStep `json:"steps,omitempty"`
}

// compatStep is one call of the window manager's row and the person's focus after it.
type compatStep struct {
	Call   compatCall `json:"call"`
	Person string     `json:"person"` // "kept", or where the pointer or focus went
	Result string     `json:"result"` // what the witness saw, classified as a cell is
	// Accounts are the calls whose result disagreed with the focus witness about the
	// person's focus; AccountsWrong is set when one said kept while it left.
	Accounts      []string `json:"accounts,omitempty"`
	AccountsWrong bool     `json:"accounts_wrong,omitempty"`
}

// compatCell is one application under one window manager.
type compatCell struct {
	WM      string         `json:"wm"`
	App     string         `json:"app"`
	Skipped string         `json:"skipped,omitempty"`
	Failed  string         `json:"failed,omitempty"` // the harness could not set the cell up
	Exited  string         `json:"exited,omitempty"` // the app exited during the cell: the end of its output
	Typing  *compatMeasure `json:"typing,omitempty"`
	Click   *compatMeasure `json:"click,omitempty"`
	Moves   []string       `json:"moves,omitempty"` // every move of the person's pointer or focus
	Calls   []compatCall   `json:"calls,omitempty"`
}

// compatMeasure is one measurement of a cell: the calls' outcome against the witness.
type compatMeasure struct {
	Class    string `json:"class"` // works, refused CODE, incomplete (honest), FALSE SUCCESS, works (reported …)
	Want     string `json:"want"`
	Got      string `json:"got"`
	Witness  string `json:"witness"`
	Contract string `json:"contract"` // the calls' outcome/effect, e.g. completed/unverifiable
}

// compatCall is what one tools/call reported.
type compatCall struct {
	Tool          string `json:"tool"`
	Outcome       string `json:"outcome"`
	IsError       bool   `json:"is_error"`
	Effect        string `json:"effect,omitempty"`
	Code          string `json:"code,omitempty"`
	Message       string `json:"message,omitempty"`
	Route         string `json:"route,omitempty"`
	FocusRestored bool   `json:"focus_restored,omitempty"`
	Person        string `json:"person"`
	// FocusLeft is how many times the person's focus left their terminal during the call
	// (focusWitness); FocusAccount says how the result's person_focus disagrees with that,
	// and FocusAccountWrong is set when it says kept while the focus left.
	FocusLeft         int    `json:"focus_left,omitempty"`
	FocusAccount      string `json:"focus_account,omitempty"`
	FocusAccountWrong bool   `json:"focus_account_wrong,omitempty"`
	// Evidence is what the call's details say it saw (cua-host/details evidence): where
	// its pointer was, whether a grab held it, which window was under it.
	Evidence map[string]any `json:"evidence,omitempty"`
}

// ok reports whether the call claimed its effect: completed, no error, and not read back
// as having done nothing.
func (c compatCall) ok() bool {
	return c.Outcome == "completed" && !c.IsError && c.Effect != "suspected_noop"
}

// compatSent is what the agent types into every app: 100 characters of capitals, spaces,
// punctuation and letters from outside the keymap.
var compatSent = mixedText(100)

// TestCompat measures background input on a display shared with a person, for real
// applications under real window managers. In every cell the person's own program (started
// by the person, an ordinary X client) takes 100 mixed characters typed by `cua-host run
// --display :N` and a click with a visible effect; oracles outside cua-host (the file an
// editor or terminal wrote, the value a page posted to the test's server, the primary
// selection) say what arrived, and xdotool where the person's pointer and focus are after
// every call. With CUA_COMPAT=full it runs every installed app and window manager and only
// records; by default it runs Chromium, gnome-text-editor and featherpad under openbox and
// fluxbox and fails on a false success or a move of the person's pointer or focus. The
// JSON report goes to $CUA_COMPAT_OUT (default a file in the temp dir).
func TestCompat(t *testing.T) {
	needDesktop(t)
	need(t, "xdotool", "xprop", "xclip")
	full := os.Getenv("CUA_COMPAT") == "full"
	if n := utf8.RuneCountInString(compatSent); n != 100 {
		t.Fatalf("compatSent has %d characters, want 100", n)
	}
	rep := &compatReport{Started: time.Now().UTC(), Full: full, Sent: compatSent}
	defer writeCompatReport(t, rep)
	wms, apps := compatWMs(), compatApps()
	if !full {
		wms = pick(wms, func(w compatWM) string { return w.name }, "openbox", "fluxbox")
		apps = pick(apps, func(a compatApp) string { return a.name }, "chromium", "gnome-text-editor", "featherpad")
	}
	// CUA_COMPAT_WMS and CUA_COMPAT_APPS (comma-separated names) narrow either run.
	if only := os.Getenv("CUA_COMPAT_WMS"); only != "" {
		wms = pick(wms, func(w compatWM) string { return w.name }, strings.Split(only, ",")...)
	}
	if only := os.Getenv("CUA_COMPAT_APPS"); only != "" {
		apps = pick(apps, func(a compatApp) string { return a.name }, strings.Split(only, ",")...)
	}
	for _, wm := range wms {
		t.Run(wm.name, func(t *testing.T) {
			row := compatWMRow{WM: wm.name}
			defer func() {
				if t.Failed() && len(row.Steps) == 0 && row.Failed == "" {
					row.Failed = "the window manager's desktop did not start (see the test log)"
				}
				rep.WMs = append(rep.WMs, row)
			}()
			if !full {
				need(t, wm.prog)
			} else if _, err := exec.LookPath(wm.prog); err != nil {
				row.Skipped = wm.prog + " is not installed"
				t.Skip(row.Skipped)
			}
			desk := startCompatDesk(t, wm)
			rp := startRunEnv(t, append(desk.d.Env(), "HOME="+desk.home, "LANG=C.UTF-8"),
				"--display", desk.d.Name(), "--mode", "unrestricted", "--dangerously-bypass-approvals", "--indicator=false")
			if m := desk.moved(); m != "" {
				t.Errorf("the agent's start moved the person's %s", m)
				desk.restore()
			}
			row.Steps = wmSteps(t, desk, rp)
			for _, s := range row.Steps {
				if !full && s.Person != "kept" {
					t.Errorf("%s: %s after %s", wm.name, s.Person, s.Call.Tool)
				}
				if !full && s.AccountsWrong {
					t.Errorf("%s: what the results said of the person's focus: %s", wm.name, strings.Join(s.Accounts, "; "))
				} else if len(s.Accounts) > 0 {
					t.Logf("%s: what the results said of the person's focus: %s", wm.name, strings.Join(s.Accounts, "; "))
				}
			}
			for _, app := range apps {
				t.Run(app.name, func(t *testing.T) {
					cell := compatCell{WM: wm.name, App: app.label}
					defer func() {
						if t.Failed() && cell.Failed == "" && cell.Typing == nil {
							cell.Failed = "the harness failed (see the test log)"
						}
						rep.Cells = append(rep.Cells, cell)
					}()
					if missing := app.missing(); missing != "" {
						cell.Skipped = missing + " is not installed"
						if !full {
							needApp(t, missing)
						}
						t.Skip(cell.Skipped)
					}
					runCell(t, desk, rp, app, &cell)
					t.Logf("%s / %s: typing %s; click %s; moves %v", wm.name, app.label, cell.Typing.Class, cell.Click.Class, cell.Moves)
					if !full {
						for what, m := range map[string]*compatMeasure{"typing": cell.Typing, "click": cell.Click} {
							if m == nil {
								continue
							}
							falseSuccess := strings.HasPrefix(m.Class, "FALSE SUCCESS")
							known, isKnown := compatKnownDefects[wm.name+"/"+app.name+"/"+what]
							switch {
							case falseSuccess && isKnown:
								t.Logf("%s / %s: %s: known defect (%s): the witness (%s) got %q", wm.name, app.label, m.Class, known, m.Witness, m.Got)
							case falseSuccess:
								t.Errorf("%s / %s: %s: want %q, the witness (%s) got %q", wm.name, app.label, m.Class, m.Want, m.Witness, m.Got)
							case isKnown:
								// Some of these come and go between runs; say so rather than fail.
								t.Logf("%s / %s: %s is %s this time, not the known defect %q", wm.name, app.label, what, m.Class, known)
							}
						}
						for _, m := range cell.Moves {
							t.Errorf("%s / %s: the person's %s", wm.name, app.label, m)
						}
						for _, c := range cell.Calls {
							if c.FocusAccountWrong {
								t.Errorf("%s / %s: %s: %s", wm.name, app.label, c.Tool, c.FocusAccount)
							}
						}
					}
				})
			}
		})
	}
	rep.Duration = time.Since(rep.Started).Round(time.Second).String()
}

// compatKnownDefects are the cells of the CI subset (window manager/app/measure) that
// are false successes today, with what is known of them. The subset logs them, with what
// the witness got, instead of failing; every other false success fails it. Some come and
// go between runs, so one that works is logged too. docs/apps.md has the whole matrix.
var compatKnownDefects = map[string]string{
	// gnome-text-editor (GTK 4) showed every key of a probe — each read back from its text
	// view (effect confirmed) — but the ctrl+s that follows did not save: in the click
	// probe in 5 cells of 46 under openbox and fluxbox, in the typing probe once in 20
	// cells with the other core busy. An xtrace of the editor's connection shows the same
	// events in a run that fails as in one that works, the s of the ctrl+s with Control in
	// its modifiers. The editor disables its save action while its document is busy, which
	// it is while it writes its draft copy a few seconds after a change (auto-save-delay);
	// scripts/gte-draft-save.sh shows a ctrl+s from xdotool dropped the same way. The
	// hotkey says its effect is unverifiable.
	"openbox/gnome-text-editor/click":  "GTK 4's text editor sometimes does not act on the ctrl+s (it drops it while it saves a draft)",
	"fluxbox/gnome-text-editor/click":  "GTK 4's text editor sometimes does not act on the ctrl+s (it drops it while it saves a draft)",
	"openbox/gnome-text-editor/typing": "GTK 4's text editor sometimes does not act on the ctrl+s (it drops it while it saves a draft)",
	"fluxbox/gnome-text-editor/typing": "GTK 4's text editor sometimes does not act on the ctrl+s (it drops it while it saves a draft)",
	// openbox holds a click it grabs to focus until it has grabbed its key bindings
	// again after every keyboard mapping change, and typing for Qt 5 borrows many
	// scattered keycodes, a change each: on a loaded machine, seconds. Pointer input now
	// waits up to 10 s for openbox to say it caught up and is refused (input_busy, nothing
	// sent) beyond; before, the click reported an error after the press (effect unknown),
	// and earlier still it was a false success.
	"openbox/featherpad/click": "the session pointer's click into an unfocused toolkit window is lost under openbox",
	// Under fluxbox (the cause is not established), Qt 5 and, in some runs, Chromium
	// translated some keys typed through remapped keycodes with a later batch's mapping.
	"fluxbox/featherpad/typing": "Qt 5 reads some remapped keys with a later mapping under fluxbox",
	"fluxbox/chromium/typing":   "Chromium sometimes reads remapped keys with a later mapping under fluxbox",
}

// pick keeps the items whose name is one of names.
func pick[T any](items []T, name func(T) string, names ...string) []T {
	var out []T
	for _, it := range items {
		for _, n := range names {
			if name(it) == n {
				out = append(out, it)
			}
		}
	}
	return out
}

func writeCompatReport(t *testing.T, rep *compatReport) {
	out := os.Getenv("CUA_COMPAT_OUT")
	if out == "" {
		out = filepath.Join(os.TempDir(), fmt.Sprintf("cua-compat-%d.json", time.Now().Unix()))
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Errorf("marshal the report: %v", err)
		return
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Errorf("write the report: %v", err)
		return
	}
	t.Logf("report: %s", out)
}

// agentCall calls a tool, records what it reported and where the person's pointer and
// focus are after it; a move is recorded in moves (when not nil) and undone, so that the
// next call starts from the person's own state.
func agentCall(t *testing.T, desk *compatDesk, rp *runProc, calls *[]compatCall, moves *[]string, name string, args map[string]any) (compatCall, map[string]any) {
	t.Helper()
	left := desk.focus.count(t)
	res := rp.call(t, name, args)
	c := describeCall(t, name, res)
	c.FocusLeft = desk.focus.count(t) - left
	c.FocusAccount, c.FocusAccountWrong = focusAccount(c, c.FocusLeft)
	c.Person = "kept"
	if m := desk.moved(); m != "" {
		c.Person = m
		if moves != nil {
			*moves = append(*moves, m+" after "+name)
		}
		desk.restore()
	}
	if calls != nil {
		*calls = append(*calls, c)
	}
	return c, structured(t, res)
}

func describeCall(t *testing.T, name string, res *mcp.CallToolResult) compatCall {
	st := structured(t, res)
	c := compatCall{Tool: name, IsError: res.IsError}
	c.Outcome, _ = outcomeOf(res).(string)
	c.Effect, _ = st["effect"].(string)
	if r, ok := st["refusal"].(map[string]any); ok {
		c.Code, _ = r["code"].(string)
		c.Message, _ = r["message"].(string)
	}
	if code, ok := st["error_code"].(string); ok {
		c.Code = code
		c.Message, _ = st["error"].(string)
	}
	if d := detailsOf(res); d != nil {
		c.Route, _ = d["route"].(string)
		c.Evidence, _ = d["evidence"].(map[string]any)
	}
	c.FocusRestored, _ = st["focus_restored"].(bool)
	if c.Message == "" && res.IsError {
		c.Message = text(res)
	}
	return c
}

// classify names what a measurement's calls and its witness show together.
func classify(calls []compatCall, witnessOK bool, nothingArrived bool, got string) string {
	contractOK := true
	var first compatCall
	for _, c := range calls {
		if !c.ok() {
			contractOK, first = false, c
			break
		}
	}
	switch {
	case contractOK && witnessOK:
		return "works"
	case witnessOK:
		return fmt.Sprintf("works (but %s reported %s %s)", first.Tool, first.Outcome, first.Code)
	case contractOK:
		return "FALSE SUCCESS: " + truncate(got, 60)
	case first.Outcome == "not_started" && nothingArrived:
		return "refused " + first.Code
	case first.Outcome == "not_started":
		return fmt.Sprintf("FALSE REFUSAL %s: %s", first.Code, truncate(got, 60))
	default:
		return fmt.Sprintf("incomplete (honest): %s %s %s", first.Tool, first.Outcome, cmp.Or(first.Code, first.Effect))
	}
}

func contractOf(calls []compatCall) string {
	var parts []string
	for _, c := range calls {
		s := c.Tool + " " + c.Outcome
		if c.Effect != "" {
			s += "/" + c.Effect
		}
		if c.Code != "" {
			s += " " + c.Code
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q…", string([]rune(s)[:n]))
}
