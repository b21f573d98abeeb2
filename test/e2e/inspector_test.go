package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestInspectorCLI drives `cua-host run` with a client not written here: the MCP
// Inspector's CLI mode (TypeScript SDK), fetched by npx from npm (or its cache).
func TestInspectorCLI(t *testing.T) {
	needDesktop(t)
	need(t, "npx")
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"cua-host": map[string]any{
		"command": cuaHost,
		"args":    []string{"run", "--display", "private", "--log-level", "warn"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := writeFile(t, "inspector.json", string(cfg))
	inspect := func(t *testing.T, args ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		full := append([]string{"-y", "@modelcontextprotocol/inspector", "--cli", "--config", cfgPath, "--server", "cua-host"}, args...)
		cmd := exec.CommandContext(ctx, "npx", full...)
		cmd.Env = append(os.Environ(), "NO_UPDATE_NOTIFIER=1", "npm_config_update_notifier=false")
		var stderr lockedBuffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			if strings.Contains(stderr.String(), "ENOTFOUND") || strings.Contains(stderr.String(), "EAI_AGAIN") {
				if os.Getenv("CI") == "" {
					t.Skipf("npm registry unreachable: %s", stderr.String())
				}
			}
			t.Fatalf("npx inspector %v: %v\nstderr: %s\nstdout: %s", args, err, stderr.String(), out)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("inspector output is not JSON: %v\n%s", err, out)
		}
		return m
	}

	list := inspect(t, "--method", "tools/list")
	tools, _ := list["tools"].([]any)
	names := map[string]bool{}
	for _, tl := range tools {
		m, _ := tl.(map[string]any)
		name, _ := m["name"].(string)
		names[name] = true
		if name == "click" {
			if _, ok := m["inputSchema"].(map[string]any); !ok {
				t.Errorf("click has no inputSchema: %v", m)
			}
			if _, ok := m["annotations"].(map[string]any); !ok {
				t.Errorf("click has no annotations: %v", m)
			}
		}
	}
	for _, want := range []string{"click", "type_text", "get_desktop_state", "health_report", "get_config"} {
		if !names[want] {
			t.Errorf("the Inspector's tools/list lacks %s (%d tools)", want, len(tools))
		}
	}

	call := inspect(t, "--method", "tools/call", "--tool-name", "get_screen_size")
	st, _ := call["structuredContent"].(map[string]any)
	meta, _ := call["_meta"].(map[string]any)
	if st["width"] != float64(1280) || meta["cua-host/outcome"] != "completed" {
		t.Errorf("the Inspector's tools/call get_screen_size = %v", call)
	}
	refused := inspect(t, "--method", "tools/call", "--tool-name", "no_such_tool")
	if refused["isError"] != true {
		t.Errorf("the Inspector's tools/call no_such_tool = %v, want isError", refused)
	}
}
