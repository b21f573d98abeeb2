package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/display"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPolicyThroughMCP: a tool the policy denies is absent from tools/list and refused
// with permission_denied when called anyway; so is a tool the policy does not allow.
func TestPolicyThroughMCP(t *testing.T) {
	needDesktop(t)
	pol := writeFile(t, "policy.yaml", `allow:
  tools: [get_screen_size, get_cursor_position, health_report, get_session, get_config, list_windows]
deny:
  tools: [clipboard_read]
`)
	rp := startRun(t, "--display", "private", "--policy", pol)
	names := rp.toolNames(t)
	if !names["get_screen_size"] || !names["list_windows"] {
		t.Errorf("tools/list lacks allowed tools: %v", names)
	}
	for _, hidden := range []string{"clipboard_read", "launch_app", "type_text"} {
		if names[hidden] {
			t.Errorf("tools/list offers %s, which the policy does not allow", hidden)
		}
	}
	for _, tool := range []string{"clipboard_read", "launch_app"} {
		res := rp.call(t, tool, map[string]any{"name": "xterm"})
		if !res.IsError || refusalCode(t, res) != "permission_denied" || outcomeOf(res) != "not_started" {
			t.Errorf("%s: isError=%v structured=%v, want a not_started permission_denied refusal", tool, res.IsError, structured(t, res))
		}
		if !strings.Contains(text(res), "permission_denied: ") {
			t.Errorf("%s: text %q lacks the refusal", tool, text(res))
		}
	}
	// The hidden alias is canonicalised before the policy sees it.
	if res := rp.call(t, "type_text_chars", map[string]any{"text": "x"}); refusalCode(t, res) != "permission_denied" {
		t.Errorf("type_text_chars: refusal %q, want permission_denied", refusalCode(t, res))
	}
	rp.mustCall(t, "get_screen_size", nil)
	_, cfg := rp.mustCall(t, "get_config", nil)
	pl, _ := cfg["policy"].(map[string]any)
	user, _ := pl["user"].(map[string]any)
	if sum, _ := user["sha256"].(string); len(sum) != 64 {
		t.Errorf("get_config policy = %v, want the user layer's sha256", cfg["policy"])
	}
}

// TestStartupRefusals: configuration errors stop `cua-host run` before it starts
// anything, with exit code 2.
func TestStartupRefusals(t *testing.T) {
	bad := writeFile(t, "bad.yaml", "allow:\n  tools: [get_screen_size]\nbogus: 1\n")
	ref := writeFile(t, "reference.yaml", "version: 3\nexpires_after: 1h\nidle_timeout: 5m\nallow: {tools: [click]}\n")
	tests := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{name: "invalid policy", args: []string{"--policy", bad}, want: "policy"},
		{name: "missing policy", args: []string{"--policy", "/nonexistent/p.yaml"}, want: "policy"},
		{name: "unrestricted without bypass", args: []string{"--mode", "unrestricted"}, want: "dangerously-bypass-approvals"},
		{name: "bounded without manifest", args: []string{"--mode", "bounded"}, want: "manifest"},
		{name: "reference manifest not approved", env: []string{"CUA_DRIVER_PERMISSION_MODE=bounded", "CUA_DRIVER_CAPABILITY_MANIFEST_FILE=" + ref},
			want: "a configured capability manifest requires --approve-capability-manifest at trusted daemon startup"},
		{name: "reference approval without a manifest", args: []string{"--approve-capability-manifest"}, want: "--approve-capability-manifest requires --capability-manifest <path>"},
		{name: "reference mode without bypass", env: []string{"CUA_DRIVER_PERMISSION_MODE=yolo"}, want: "permission mode unrestricted requires --dangerously-bypass-approvals at trusted daemon startup"},
		{name: "bad display", args: []string{"--display", "x11"}, want: "--display"},
		{name: "bad screen", args: []string{"--screen", "big"}, want: "--screen"},
		{name: "stray argument", args: []string{"extra"}, want: "unexpected"},
		{name: "short token", args: []string{"--http", "127.0.0.1:1"}, env: []string{"CUA_HOST_HTTP_TOKEN=short"}, want: "CUA_HOST_HTTP_TOKEN"},
		{name: "no token", args: []string{"--http", "127.0.0.1:1"}, want: "CUA_HOST_HTTP_TOKEN"},
		{name: "reference token, short", args: []string{"--http", "127.0.0.1:1"}, env: []string{"CUA_DRIVER_RS_MCP_HTTP_TOKEN=short"}, want: "CUA_HOST_HTTP_TOKEN"},
		{name: "both tokens, different", args: []string{"--http", "127.0.0.1:1"}, env: []string{"CUA_HOST_HTTP_TOKEN=" + strings.Repeat("a", 40), "CUA_DRIVER_RS_MCP_HTTP_TOKEN=" + strings.Repeat("b", 40)}, want: "disagree"},
		{name: "token with space", args: []string{"--http", "127.0.0.1:1"}, env: []string{"CUA_HOST_HTTP_TOKEN=" + strings.Repeat("a", 20) + " " + strings.Repeat("b", 20)}, want: "whitespace"},
		{name: "all interfaces", args: []string{"--http", "0.0.0.0:8765"}, env: []string{"CUA_HOST_HTTP_TOKEN=" + strings.Repeat("t", 40)}, want: "loopback"},
		{name: "public address", args: []string{"--http", "8.8.8.8:8765"}, env: []string{"CUA_HOST_HTTP_TOKEN=" + strings.Repeat("t", 40)}, want: "loopback"},
		{name: "host name", args: []string{"--http", "example.com:8765"}, env: []string{"CUA_HOST_HTTP_TOKEN=" + strings.Repeat("t", 40)}, want: "loopback"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(cuaHost, append([]string{"run"}, tc.args...)...)
			cmd.Env = append(os.Environ(), tc.env...)
			if len(tc.env) == 0 {
				cmd.Env = append(cmd.Env, "CUA_HOST_HTTP_TOKEN=")
			}
			start := time.Now()
			out, err := cmd.CombinedOutput()
			code := -1
			if cmd.ProcessState != nil {
				code = cmd.ProcessState.ExitCode()
			}
			if code != 2 {
				t.Errorf("cua-host run %v: exit %d (%v), want 2; output %s", tc.args, code, err, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("cua-host run %v: output %q lacks %q", tc.args, out, tc.want)
			}
			if strings.Contains(string(out), strings.Repeat("a", 20)+" ") {
				t.Errorf("the error quotes the token: %s", out)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("refusal took %v", el)
			}
		})
	}
}

// startDisplay starts a private display the test owns (Xvfb with a cookie, openbox) and
// returns its environment (DISPLAY, XAUTHORITY, …).
func startDisplay(t *testing.T) []string {
	t.Helper()
	d, err := display.Start(t.Context(), display.Options{WindowManager: true})
	if err != nil {
		t.Fatalf("private display: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d.Env()
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// startForeign starts an X client the session did not launch, on display d.
func startForeign(t *testing.T, env []string, prog string, args ...string) int {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

// TestBoundedManifest: a bounded session sees only its manifest's tools, can launch only
// the manifest's apps, and cannot touch an application outside its manifest.
func TestBoundedManifest(t *testing.T) {
	needDesktop(t)
	need(t, "xclock")
	denv := startDisplay(t)
	foreign := startForeign(t, denv, "xclock")
	xterm, err := exec.LookPath("xterm")
	if err != nil {
		t.Fatal(err)
	}
	xterm, _ = filepath.EvalSymlinks(xterm)
	manifest := writeFile(t, "manifest.yaml", `version: 1
expires_after: 1h
idle_timeout: 30m
allow:
  tools: [launch_app, list_windows, bring_to_front, type_text, get_session, get_config]
resources:
  apps:
    - {executable: `+xterm+`, launch: true}
  desktop: {observe: false, input: false}
`)
	rp := startRunEnv(t, []string{"XAUTHORITY=" + envValue(denv, "XAUTHORITY")},
		"--display", envValue(denv, "DISPLAY"), "--mode", "bounded", "--manifest", manifest)
	names := rp.toolNames(t)
	for _, n := range []string{"clipboard_read", "kill_app", "get_desktop_state", "click"} {
		if names[n] {
			t.Errorf("tools/list offers %s, which the manifest does not allow", n)
		}
	}
	if !names["launch_app"] || !names["bring_to_front"] {
		t.Errorf("tools/list lacks manifest tools: %v", names)
	}
	// The foreign clock's window exists (its pid is real).
	var clockWin int
	if !waitFor(10*time.Second, func() bool {
		_, st := rp.mustCall(t, "list_windows", nil)
		ws, _ := st["windows"].([]any)
		for _, w := range ws {
			m, _ := w.(map[string]any)
			if number(m, "pid") == foreign {
				clockWin = number(m, "window_id")
				return true
			}
		}
		return false
	}) {
		t.Logf("list_windows does not show the foreign xclock (pid %d); touching it by pid only", foreign)
	}
	touch := map[string]any{"pid": foreign}
	if clockWin != 0 {
		touch["window_id"] = clockWin
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"bring_to_front", touch},
		{"type_text", map[string]any{"pid": foreign, "text": "x"}},
		{"launch_app", map[string]any{"name": "xclock"}},
		{"kill_app", map[string]any{"pid": foreign}},
	} {
		res := rp.call(t, c.tool, c.args)
		code := refusalCode(t, res)
		if !res.IsError || outcomeOf(res) != "not_started" || (code != "bounded_resource_outside_manifest" && code != "manifest_denied") {
			t.Errorf("%s %v: isError=%v structured=%v, want an bounded_resource_outside_manifest refusal", c.tool, c.args, res.IsError, structured(t, res))
		}
	}
	// Inside the manifest it works.
	rp.mustCall(t, "launch_app", map[string]any{"name": "xterm"})
	_, sess := rp.mustCall(t, "get_session", nil)
	if sess["mode"] != "bounded" {
		t.Errorf("get_session = %v, want mode bounded", sess)
	}
}
