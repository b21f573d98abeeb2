package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/authz"
)

// runBinary runs the built binary with env added to a cleared configuration environment
// and returns stdout, stderr and the exit code.
func runBinary(t *testing.T, bin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CUA_HOST_") && !strings.HasPrefix(kv, "CUA_DRIVER_") && !strings.HasPrefix(kv, "DISPLAY=") {
			base = append(base, kv)
		}
	}
	cmd.Env = append(base, env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// referenceManifestFile writes the reference's example manifest with xterm for its editor.
func referenceManifestFile(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	src, err := os.ReadFile("../../worker/testdata/reference-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data := []byte(strings.ReplaceAll(string(src), "/usr/bin/example-editor", "/usr/bin/xterm"))
	path := filepath.Join(dir, "manifest.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, data
}

// policyDigest is the layer digest recipe of both programs: SHA-256 over a domain string
// and, per file, u64be(len(name)) name u64be(len(data)) data.
func policyDigest(domain, name string, data []byte) string {
	h := sha256.New()
	h.Write([]byte(domain))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(name)))
	h.Write(n[:])
	h.Write([]byte(name))
	binary.BigEndian.PutUint64(n[:], uint64(len(data)))
	h.Write(n[:])
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// TestStatusCommand drives the built binary: status reports the mode, each policy layer
// with its path and digests, and the manifest with its version, digests and approval, and
// exits 1 exactly when `run` would refuse to start.
func TestStatusCommand(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	manifest, manifestData := referenceManifestFile(t, dir)
	polData := []byte("allow: {tools: [click, get_window_state]}\ndeny: {tools: [kill_app]}\n")
	pol := filepath.Join(dir, "policy.yaml")
	os.WriteFile(pol, polData, 0o600)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("version: 3\nexpires_after: 1h\nidle_timeout: 1m\nallow: {tools: [click]}\nresources:\n  browser: {}\n"), 0o600)

	t.Run("defaults", func(t *testing.T) {
		out, errOut, code := runBinary(t, bin, nil, "status")
		if code != 0 || !strings.Contains(out, "permission mode:      standard (built_in_default)") || !strings.Contains(out, "startup:              ok") {
			t.Errorf("status = %d\n%s%s", code, out, errOut)
		}
	})

	t.Run("the reference's environment", func(t *testing.T) {
		env := []string{"CUA_DRIVER_PERMISSION_MODE=autonomous", "CUA_DRIVER_CAPABILITY_MANIFEST_FILE=" + manifest,
			"CUA_DRIVER_CAPABILITY_MANIFEST_APPROVED=yes", "CUA_DRIVER_POLICY_FILE=" + pol}
		out, errOut, code := runBinary(t, bin, env, "status", "--json")
		if code != 0 {
			t.Fatalf("status --json = %d\n%s%s", code, out, errOut)
		}
		var rep statusReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		plain := sha256.Sum256(manifestData)
		driver := sha256.Sum256(append([]byte("cua-driver-capability-manifest-v3\x00"), manifestData...))
		m := rep.Manifest
		if !m.Configured || !m.Valid || !m.Approved || m.Path != manifest || m.Source != "CUA_DRIVER_CAPABILITY_MANIFEST_FILE" ||
			m.Version != 3 || m.Vocabulary != "cua-driver" || m.AllowCount != 8 ||
			m.SHA256 != hex.EncodeToString(plain[:]) || m.DriverSHA256 != hex.EncodeToString(driver[:]) {
			t.Errorf("manifest status = %+v", m)
		}
		u := rep.UserPolicy
		if !u.Valid || u.Path != pol || u.Source != "CUA_DRIVER_POLICY_FILE" || u.Format != "yaml" ||
			u.SHA256 != policyDigest("cua-host-policy-v1\x00", "policy.yaml", polData) ||
			u.DriverSHA256 != policyDigest("cua-driver-policy-v1\x00", "policy.yaml", polData) {
			t.Errorf("user policy status = %+v", u)
		}
		if rep.ManagedPolicy.Configured || rep.PermissionMode != "bounded" || rep.PermissionModeSource != "CUA_DRIVER_PERMISSION_MODE" || !rep.Startup.OK {
			t.Errorf("status = %+v", rep)
		}
	})

	tests := []struct {
		name     string
		env      []string
		args     []string
		wantCode int
		want     []string
	}{
		{name: "not approved", env: []string{"CUA_DRIVER_PERMISSION_MODE=bounded", "CUA_DRIVER_CAPABILITY_MANIFEST_FILE=" + manifest},
			wantCode: 1, want: []string{"not approved", "version 3 (cua-driver vocabulary)", "refused: " + errMissingApproval}},
		{name: "cua-host's flag approves", args: []string{"--mode", "bounded", "--manifest", manifest},
			wantCode: 0, want: []string{"approved by --manifest", "startup:              ok"}},
		{name: "refused field", args: []string{"--permission-mode", "bounded", "--capability-manifest", bad, "--approve-capability-manifest"},
			wantCode: 1, want: []string{"invalid: manifest " + bad + ": line 6: resources.browser: is not supported by cua-host"}},
		{name: "missing policy", env: []string{"CUA_DRIVER_MANAGED_POLICY_FILE=" + filepath.Join(dir, "nope.yaml")},
			wantCode: 1, want: []string{"managed policy:", "configured permission policy path does not exist", "refused: managed policy"}},
		{name: "conflicting variables", env: []string{"CUA_HOST_PERMISSION_MODE=standard", "CUA_DRIVER_PERMISSION_MODE=bounded"},
			wantCode: 1, want: []string{"permission mode:      invalid", "disagree"}},
		{name: "unrestricted disabled", env: []string{"CUA_DRIVER_DISABLE_UNRESTRICTED=1", "CUA_DRIVER_PERMISSION_MODE=yolo", "CUA_DRIVER_DANGEROUSLY_BYPASS_APPROVALS=1"},
			wantCode: 1, want: []string{"disabled by managed startup configuration", "refused: " + errUnrestrictedDisable}},
		{name: "help", args: []string{"-h"}, wantCode: 0, want: []string{"usage: cua-host status"}},
		{name: "bad flag", args: []string{"--nope"}, wantCode: 2},
		{name: "extra argument", args: []string{"now"}, wantCode: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runBinary(t, bin, tt.env, append([]string{"status"}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.wantCode, out, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestListToolsCommand drives the built binary without a display: list-tools names every
// tool the inventory exposes, each with an object input schema.
func TestListToolsCommand(t *testing.T) {
	bin := buildBinary(t)
	var exposed []string
	for _, e := range authz.DefaultInventory().Entries() {
		if e.Exposed() {
			exposed = append(exposed, e.Tool)
		}
	}
	slices.Sort(exposed)

	out, errOut, code := runBinary(t, bin, nil, "list-tools", "--json")
	if code != 0 {
		t.Fatalf("list-tools --json = %d: %s", code, errOut)
	}
	var doc struct {
		Tools []struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"inputSchema"`
			Annotations map[string]any `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var names []string
	for _, tl := range doc.Tools {
		names = append(names, tl.Name)
		if tl.InputSchema["type"] != "object" || tl.Description == "" || tl.Annotations == nil {
			t.Errorf("%s: schema %v, description %q, annotations %v", tl.Name, tl.InputSchema, tl.Description, tl.Annotations)
		}
	}
	if !slices.Equal(names, exposed) {
		t.Errorf("list-tools names %v, want the inventory's exposed tools %v", names, exposed)
	}
	if props, _ := doc.Tools[slices.Index(names, "click")].InputSchema["properties"].(map[string]any); props["x"] == nil || props["scope"] == nil {
		t.Errorf("click's schema lacks x and scope: %v", props)
	}

	out, _, code = runBinary(t, bin, nil, "list-tools")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != len(exposed) || !slices.Contains(lines, "clipboard_read: Report what the clipboard offers; with include_text, its text too.") {
		t.Errorf("list-tools = %d\n%s", code, out)
	}
	for i, l := range lines {
		if name, _, _ := strings.Cut(l, ":"); name != exposed[i] {
			t.Errorf("line %d = %q, want tool %s", i, l, exposed[i])
		}
	}
	for _, args := range [][]string{{"-h"}, {"--help"}} {
		if out, _, code := runBinary(t, bin, nil, append([]string{"list-tools"}, args...)...); code != 0 || !strings.Contains(out, "usage: cua-host list-tools") {
			t.Errorf("list-tools %v = %d %q", args, code, out)
		}
	}
	if _, _, code := runBinary(t, bin, nil, "list-tools", "extra"); code != 2 {
		t.Errorf("list-tools extra = %d, want 2", code)
	}
}
