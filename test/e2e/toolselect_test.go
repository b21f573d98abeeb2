package e2e

import (
	"errors"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestRunToolSelection: `cua-host run --tools` serves exactly those tools — tools/list
// through the go-sdk client shows them and nothing else, and a call of any other is
// refused permission_denied by the worker (not_started) — and --exclude-tools leaves out
// just the ones it names. An unknown name stops run before anything starts (exit 2).
func TestRunToolSelection(t *testing.T) {
	needDesktop(t)

	t.Run("tools", func(t *testing.T) {
		rp := startRun(t, "--display", "private", "--tools", "get_screen_size,list_windows,get_session")
		got := slices.Sorted(maps.Keys(rp.toolNames(t)))
		if want := []string{"get_screen_size", "get_session", "list_windows"}; !slices.Equal(got, want) {
			t.Errorf("tools/list = %v, want exactly %v", got, want)
		}
		rp.mustCall(t, "get_screen_size", map[string]any{})
		for _, name := range []string{"click", "launch_app", "type_text_chars"} {
			res := rp.call(t, name, map[string]any{"scope": "desktop", "x": 1, "y": 1, "text": "x", "name": "xterm"})
			if code := refusalCode(t, res); !res.IsError || code != "permission_denied" || outcomeOf(res) != "not_started" {
				t.Errorf("%s outside --tools = isError %v, code %q, outcome %v; want refused permission_denied, not_started", name, res.IsError, code, outcomeOf(res))
			}
		}
	})

	t.Run("exclude-tools", func(t *testing.T) {
		rp := startRun(t, "--display", "private", "--exclude-tools", "click,type_text")
		names := rp.toolNames(t)
		if names["click"] || names["type_text"] || !names["zoom"] || !names["get_window_state"] || !names["double_click"] {
			t.Errorf("tools/list with --exclude-tools click,type_text = %v", slices.Sorted(maps.Keys(names)))
		}
		res := rp.call(t, "click", map[string]any{"scope": "desktop", "x": 1, "y": 1})
		if code := refusalCode(t, res); code != "permission_denied" {
			t.Errorf("excluded click = %q, want permission_denied", code)
		}
	})

	t.Run("unknown name", func(t *testing.T) {
		cmd := exec.Command(cuaHost, "run", "--display", "private", "--tools", "get_screen_size,screenshots")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), `--tools: unknown tool "screenshots"`) {
			t.Errorf("run --tools get_screen_size,screenshots = %v: %s; want exit 2 naming the tool", err, out)
		}
	})
}
