package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/test/testkit"
)

// buildBinary builds cua-host once per test run.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cua-host")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func requireDisplayPrograms(t *testing.T) {
	t.Helper()
	testkit.NeedPrograms(t, "Xvfb", "openbox", "dbus-daemon")
}

// TestCallCLI drives the shipped binary: `cua-host call` prints one JSON object and exits
// 0 only when the call completed without error.
func TestCallCLI(t *testing.T) {
	requireDisplayPrograms(t)
	bin := buildBinary(t)
	dir := t.TempDir()
	deny := filepath.Join(dir, "deny.yaml")
	os.WriteFile(deny, []byte("deny: [health_report]\n"), 0o600)
	tests := []struct {
		name        string
		args        []string
		wantExit    int
		wantOutcome string
		wantCode    string
		wantStderr  string
	}{
		{name: "health report on a private display", args: []string{"call", "--display", "private", "health_report"}, wantExit: 0, wantOutcome: "completed"},
		{name: "policy denial", args: []string{"call", "--display", "private", "--policy", deny, "health_report"}, wantExit: 1, wantOutcome: "not_started", wantCode: "permission_denied"},
		{name: "unknown tool", args: []string{"call", "--display", "private", "no_such_tool"}, wantExit: 1, wantOutcome: "not_started", wantCode: "unclassified_tool"},
		{name: "args not an object", args: []string{"call", "health_report", "[1]"}, wantExit: 2, wantStderr: "must be a JSON object"},
		{name: "missing policy file", args: []string{"call", "--policy", filepath.Join(dir, "nope.yaml"), "health_report"}, wantExit: 2, wantStderr: "user policy"},
		{name: "unrestricted without bypass", args: []string{"call", "--mode", "unrestricted", "health_report"}, wantExit: 2, wantStderr: "--dangerously-bypass-approvals"},
		{name: "bypass with standard", args: []string{"call", "--dangerously-bypass-approvals", "health_report"}, wantExit: 2, wantStderr: "cannot be combined"},
		{name: "bounded without manifest", args: []string{"call", "--mode", "bounded", "health_report"}, wantExit: 2, wantStderr: errMissingManifest},
		{name: "unknown mode", args: []string{"call", "--mode", "godmode", "health_report"}, wantExit: 2, wantStderr: "unknown permission mode"},
		{name: "bad display", args: []string{"call", "--display", "nowhere", "health_report"}, wantExit: 1, wantStderr: "--display"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			cmd.Env = append(os.Environ(), "DISPLAY=")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.wantExit {
				t.Fatalf("exit %d, want %d; stdout %s stderr %s", code, tt.wantExit, out, stderr.String())
			}
			if tt.wantStderr != "" && !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.wantStderr)
			}
			if tt.wantOutcome == "" {
				if len(out) != 0 {
					t.Errorf("stdout %q, want nothing on a usage error", out)
				}
				return
			}
			var res struct {
				Outcome string `json:"outcome"`
				IsError bool   `json:"is_error"`
				Refusal *struct {
					Code string `json:"code"`
				} `json:"refusal"`
				Content    []map[string]any `json:"content"`
				Structured json.RawMessage  `json:"structured"`
			}
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("stdout is not one JSON object: %q", out)
			}
			if res.Outcome != tt.wantOutcome {
				t.Errorf("outcome %q, want %q", res.Outcome, tt.wantOutcome)
			}
			if tt.wantCode != "" && (res.Refusal == nil || res.Refusal.Code != tt.wantCode) {
				t.Errorf("refusal %+v, want code %s", res.Refusal, tt.wantCode)
			}
			if tt.wantCode == "" && (res.IsError || res.Refusal != nil || len(res.Structured) == 0) {
				t.Errorf("result %s", out)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	bin := buildBinary(t)
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "cua-host ") {
		t.Errorf("version = %q, %v", out, err)
	}
}
