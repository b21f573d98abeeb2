package e2e

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// designTools are the base tool set listed in docs/architecture.md ("Adding a tool"): the
// tools every build offers, whatever else is added.
var designTools = []string{
	"list_apps", "list_windows", "get_window_state", "get_accessibility_tree", "get_desktop_state",
	"get_screen_size", "get_cursor_position", "zoom", "click", "double_click", "right_click", "drag",
	"move_cursor", "mouse_button_down", "mouse_button_up", "scroll", "type_text", "press_key", "hotkey",
	"set_value", "launch_app", "kill_app", "bring_to_front", "set_window_frame", "clipboard_read",
	"clipboard_write", "get_session", "end_session", "health_report", "get_config",
}

// unrestricted is a mode in which no consent prompt can get in the way of the task.
var unrestricted = []string{"--display", "private", "--mode", "unrestricted", "--dangerously-bypass-approvals"}

// TestAgentTask is the whole job through MCP: list tools, launch a terminal, type a command
// into it, press Return, see the file the command wrote (an oracle outside cua-host),
// capture the screen and decode the PNG, end the session.
func TestAgentTask(t *testing.T) {
	needDesktop(t)
	rp := startRun(t, unrestricted...)

	names := rp.toolNames(t)
	for _, want := range []string{"launch_app", "type_text", "press_key", "get_desktop_state", "list_windows", "health_report", "get_config", "get_session"} {
		if !names[want] {
			t.Fatalf("tools/list lacks %s (has %d tools)", want, len(names))
		}
	}
	if names["type_text_chars"] {
		t.Errorf("tools/list lists the hidden alias type_text_chars")
	}

	_, health := rp.mustCall(t, "health_report", nil)
	if !health["private_display"].(bool) {
		t.Errorf("health_report: private_display = false")
	}
	_, cfg := rp.mustCall(t, "get_config", nil)
	if s, _ := cfg["session"].(map[string]any); s["mode"] != "unrestricted" {
		t.Errorf("get_config session = %v, want mode unrestricted", cfg["session"])
	}

	_, launched := rp.mustCall(t, "launch_app", map[string]any{"name": "xterm",
		// A shell without start-up files: the machine's own (a version manager waiting on a
		// lock, say) must not decide whether the typed command runs in time.
		"additional_arguments": []string{"-title", "cua-e2e", "-e", "bash", "--norc", "--noprofile"}})
	pid := number(launched, "pid")
	ids, _ := launched["window_ids"].([]any)
	if pid <= 0 || len(ids) == 0 {
		t.Fatalf("launch_app xterm = %v", launched)
	}
	win := int(ids[0].(float64))

	out := filepath.Join(t.TempDir(), "out.txt")
	target := map[string]any{"pid": pid, "window_id": win}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range target {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	rp.mustCall(t, "type_text", with(map[string]any{"text": "echo hello-from-cua > " + out}))
	rp.mustCall(t, "press_key", with(map[string]any{"key": "Return"}))
	var got []byte
	if !waitFor(15*time.Second, func() bool {
		got, _ = os.ReadFile(out)
		return string(got) == "hello-from-cua\n"
	}) {
		t.Fatalf("the terminal did not write %s: got %q", out, got)
	}

	shot, _ := rp.mustCall(t, "get_desktop_state", map[string]any{})
	img := decodePNG(t, shot)
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 800 {
		t.Errorf("screenshot is %dx%d, want 1280x800", b.Dx(), b.Dy())
	}

	if names["end_session"] {
		rp.mustCall(t, "end_session", nil)
		if res := rp.call(t, "get_screen_size", nil); refusalCode(t, res) != "session_ended" {
			t.Errorf("call after end_session: refusal %q, want session_ended", refusalCode(t, res))
		}
	}
	if err := rp.close(); err != nil {
		t.Errorf("cua-host run exit: %v", err)
	}
	if code := rp.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("cua-host run exited with %d, want 0", code)
	}
}

// decodePNG returns the result's one PNG image, decoded.
func decodePNG(t testing.TB, res *mcp.CallToolResult) image.Image {
	t.Helper()
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			if ic.MIMEType != "image/png" {
				t.Fatalf("image MIME type %q, want image/png", ic.MIMEType)
			}
			img, err := png.Decode(bytes.NewReader(ic.Data))
			if err != nil {
				t.Fatalf("decode PNG (%d bytes): %v", len(ic.Data), err)
			}
			return img
		}
	}
	t.Fatalf("no image in the result: %q", text(res))
	return nil
}

// TestDesignToolsListed reports the tools of the base set (docs/architecture.md) that the
// worker does not offer yet.
func TestDesignToolsListed(t *testing.T) {
	needDesktop(t)
	rp := startRun(t, unrestricted...)
	names := rp.toolNames(t)
	var missing []string
	for _, n := range designTools {
		if !names[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		t.Skipf("not offered by the worker yet (base tool set, docs/architecture.md): %s", strings.Join(missing, ", "))
	}
	t.Logf("all %d tools of the base set (docs/architecture.md) are listed", len(designTools))
}
