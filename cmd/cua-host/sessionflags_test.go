package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
)

// TestSessionFlagsResolve: every invalid combination stops before anything starts, with
// the meaning of the reference's startup errors; valid ones resolve to a ceiling and a
// session spec.
func TestSessionFlagsResolve(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", "version: 1\nexpires_after: 2h\nidle_timeout: 10m\nallow: {tools: [click]}\nresources: {apps: [{executable: /usr/bin/xterm, launch: true}]}\n")
	bad := write("bad.yaml", "version: 1\nexpires_after: 2h\nidle_timeout: 10m\nallow: {tools: [clik]}\n")
	refSrc, err := os.ReadFile("../../worker/testdata/reference-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reference := write("reference.yaml", strings.ReplaceAll(string(refSrc), "/usr/bin/example-editor", "/usr/bin/xterm"))
	relative := write("rel.yaml", "version: 1\nexpires_after: 2h\nidle_timeout: 10m\nallow: {tools: [click]}\nresources: {apps: [{executable: xterm}]}\n")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string // error substring; "" resolves
		mode authz.Mode
	}{
		{name: "default standard", args: nil},
		{name: "unknown mode", args: []string{"--mode", "godmode"}, want: "unknown permission mode"},
		{name: "unrestricted needs bypass", args: []string{"--mode", "unrestricted"}, want: "requires --dangerously-bypass-approvals"},
		{name: "bypass needs unrestricted", args: []string{"--dangerously-bypass-approvals"}, want: errUnexpectedBypass},
		{name: "bypass with bounded", args: []string{"--mode", "bounded", "--manifest", good, "--dangerously-bypass-approvals"}, want: errUnexpectedBypass},
		{name: "bounded needs manifest", args: []string{"--mode", "bounded"}, want: errMissingManifest},
		{name: "manifest needs bounded", args: []string{"--manifest", good}, want: "applies only to permission mode bounded"},
		{name: "unrestricted disabled", args: []string{"--mode", "unrestricted", "--dangerously-bypass-approvals"}, env: map[string]string{envDisableUnrestricted: "yes"}, want: "disabled by managed startup configuration"},
		{name: "unrestricted acknowledged", args: []string{"--mode", "yolo", "--dangerously-bypass-approvals"}, mode: authz.Unrestricted},
		// The reference's spellings and environment.
		{name: "reference flags need approval", args: []string{"--permission-mode", "bounded", "--capability-manifest", good}, want: errMissingApproval},
		{name: "reference flags approved", args: []string{"--permission-mode", "autonomous", "--capability-manifest", good, "--approve-capability-manifest"}, mode: authz.Bounded},
		{name: "approval without a manifest", args: []string{"--approve-capability-manifest"}, want: errUnexpectedApproval},
		{name: "approval from the environment without a manifest", env: map[string]string{envDriverManifestApproved: "1"}, want: errUnexpectedApproval},
		{name: "mode and permission-mode disagree", args: []string{"--mode", "bounded", "--permission-mode", "unrestricted"}, want: "disagree"},
		{name: "mode and permission-mode agree", args: []string{"--mode", "bounded", "--permission-mode", "autonomous", "--manifest", good}, mode: authz.Bounded},
		{name: "two manifest flags", args: []string{"--mode", "bounded", "--manifest", good, "--capability-manifest", bad}, want: "name different files"},
		{name: "environment bounded without a manifest", env: map[string]string{envDriverPermissionMode: "bounded"}, want: errMissingManifest},
		{name: "environment manifest without approval", env: map[string]string{envDriverPermissionMode: "autonomous", envDriverManifestFile: good}, want: errMissingApproval},
		{name: "environment manifest approved", env: map[string]string{envDriverPermissionMode: "autonomous", envDriverManifestFile: good, envDriverManifestApproved: "on"}, mode: authz.Bounded},
		{name: "environment manifest approved by cua-host's variable", env: map[string]string{envPermissionMode: "bounded", envDriverManifestFile: good, envManifestApproved: "yes"}, mode: authz.Bounded},
		{name: "reference example manifest", env: map[string]string{envDriverPermissionMode: "bounded", envDriverManifestFile: reference, envDriverManifestApproved: "true"}, mode: authz.Bounded},
		{name: "environment manifest in standard mode", env: map[string]string{envDriverManifestFile: good, envDriverManifestApproved: "1"}, want: "applies only to permission mode bounded"},
		{name: "environment unrestricted without bypass", env: map[string]string{envDriverPermissionMode: "yolo"}, want: errMissingBypass},
		{name: "environment unrestricted with bypass", env: map[string]string{envDriverPermissionMode: "yolo", envDriverBypass: "TRUE"}, mode: authz.Unrestricted},
		{name: "environment bypass in standard mode", env: map[string]string{envBypass: "1"}, want: errUnexpectedBypass},
		{name: "a flag wins over the environment", args: []string{"--mode", "standard"}, env: map[string]string{envDriverPermissionMode: "bounded"}, mode: authz.Standard},
		{name: "cua-host's variable and the reference's agree", env: map[string]string{envPermissionMode: "yolo", envDriverPermissionMode: "unrestricted", envDriverBypass: "1"}, mode: authz.Unrestricted},
		{name: "cua-host's variable and the reference's disagree", env: map[string]string{envPermissionMode: "standard", envDriverPermissionMode: "bounded"}, want: envPermissionMode + `="standard" and ` + envDriverPermissionMode + `="bounded" disagree`},
		{name: "unknown mode in the environment", env: map[string]string{envDriverPermissionMode: "godmode"}, want: "unknown permission mode 'godmode'; expected standard, bounded, or unrestricted"},
		{name: "reference switch disables unrestricted", args: []string{"--mode", "unrestricted", "--dangerously-bypass-approvals"}, env: map[string]string{envDriverDisableUnrestricted: "on"}, want: errUnrestrictedDisable},
		{name: "switches disagree", args: []string{"--mode", "unrestricted", "--dangerously-bypass-approvals"}, env: map[string]string{envDisableUnrestricted: "0", envDriverDisableUnrestricted: "1"}, want: "disagree"},
		{name: "switch with a typo", env: map[string]string{envDriverDisableUnrestricted: "ture"}, want: "want 1, true, yes or on"},
		{name: "bad consent", args: []string{"--consent", "always"}, want: "want dialog, tty or deny"},
		{name: "dialog consent", args: []string{"--consent", "dialog"}},
		{name: "tty consent", args: []string{"--consent", "tty"}},
		{name: "ttl too long", args: []string{"--session-ttl", "25h"}, want: "--session-ttl"},
		{name: "ttl below a second", args: []string{"--session-ttl", "500ms", "--idle-ttl", "500ms"}, want: "--session-ttl"},
		{name: "idle above ttl", args: []string{"--session-ttl", "1h", "--idle-ttl", "2h"}, want: "--idle-ttl"},
		{name: "malformed manifest", args: []string{"--mode", "bounded", "--manifest", bad}, want: "manifest " + bad + ": line 4: allow.tools[0]: unknown tool \"clik\""},
		{name: "relative executable", args: []string{"--mode", "bounded", "--manifest", relative}, want: "resources.apps[0].executable"},
		{name: "missing manifest", args: []string{"--mode", "bounded", "--manifest", filepath.Join(dir, "nope.yaml")}, want: "no such file"},
		{name: "missing policy", args: []string{"--policy", filepath.Join(dir, "nope.yaml")}, want: "user policy"},
		{name: "secret service", args: []string{"--secret-service", "service=mail,user=ada"}, env: map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus"}},
		{name: "secret service without a bus", args: []string{"--secret-service", "service=mail"}, want: "DBUS_SESSION_BUS_ADDRESS is not set"},
		{name: "secret service not ATTR=VALUE", args: []string{"--secret-service", "mail"}, env: map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/b"}, want: `--secret-service: "mail" is not ATTR=VALUE`},
		{name: "secret service and a directory", args: []string{"--secret-service", "service=mail", "--secrets-dir", dir}, env: map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/b"}, want: "cannot be combined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			sf := addSessionFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			setup, err := sf.resolve("cli", func(k string) string { return tt.env[k] })
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("resolve(%v) = %v, want an error containing %q", tt.args, err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("resolve(%v) = %v", tt.args, err)
			}
			if tt.mode != 0 && setup.spec.Mode != tt.mode {
				t.Errorf("mode = %s, want %s", setup.spec.Mode, tt.mode)
			}
			if err := setup.ceiling.Validate(); err != nil {
				t.Errorf("ceiling %+v: %v", setup.ceiling, err)
			}
			if err := setup.ceiling.Admit(setup.spec.Mode, setup.spec.TTL, setup.spec.IdleTTL); err != nil {
				t.Errorf("the session does not fit its own ceiling: %v", err)
			}
		})
	}
}

func TestSessionFlagsBoundedLifetimes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.yaml")
	os.WriteFile(path, []byte("version: 1\nexpires_after: 2h\nidle_timeout: 10m\nallow: {tools: [click]}\n"), 0o600)
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	sf := addSessionFlags(fs)
	fs.Parse([]string{"--mode", "bounded", "--manifest", path})
	setup, err := sf.resolve("cli", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if setup.spec.Mode != authz.Bounded || setup.spec.TTL != 2*time.Hour || setup.spec.IdleTTL != 10*time.Minute || setup.manifest == nil || len(setup.spec.Manifest) == 0 {
		t.Errorf("setup = %+v, want the manifest's lifetimes", setup.spec)
	}
	if setup.consentFor(&displaySetup{facts: host.DisplayFacts{Name: ":9", Private: true}}, nil) != nil {
		t.Error("without --consent, a private display must have no provider (deny)")
	}
	if setup.consentFor(&displaySetup{facts: host.DisplayFacts{Name: ":9"}}, nil) == nil {
		t.Error("without --consent, a shared display must get the dialog provider")
	}
}

func TestInventoryCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runInventory([]string{"--json"}, &out, &errb); code != 0 {
		t.Fatalf("inventory --json = %d: %s", code, errb.String())
	}
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil || len(rows) < 30 {
		t.Fatalf("inventory --json: %v, %d rows", err, len(rows))
	}
	out.Reset()
	if code := runInventory(nil, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "TOOL") || !strings.Contains(out.String(), "kill_app") {
		t.Errorf("inventory = %d %q", code, out.String())
	}
	out.Reset()
	runInventory([]string{"--markdown"}, &out, &errb)
	doc, err := os.ReadFile("../../docs/tools.md")
	if err != nil || !bytes.Equal(doc, out.Bytes()) {
		t.Errorf("inventory --markdown differs from docs/tools.md (%v)", err)
	}
	if code := runInventory([]string{"extra"}, &out, &errb); code != 2 {
		t.Errorf("inventory extra = %d, want 2", code)
	}
}

// TestCallAuthorizationFlags drives the shipped binary: invalid authorization flags stop it
// with exit status 2 before anything starts; a bounded session runs exactly its manifest.
func TestCallAuthorizationFlags(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte("version: 1\nexpires_after: 1h\nidle_timeout: 5m\nallow: {tools: [get_session]}\n"), 0o600)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("version: 1\nexpires_after: 1h\nidle_timeout: 5m\nallow: {tools: [get_session]}\nresources: {apps: [{executable: ../x}]}\n"), 0o600)
	reference, _ := referenceManifestFile(t, dir)
	tests := []struct {
		name       string
		args       []string
		env        []string
		display    bool
		wantExit   int
		wantStderr string
		wantStdout string
	}{
		{name: "malformed manifest", args: []string{"call", "--mode", "bounded", "--manifest", bad, "get_session"}, wantExit: 2, wantStderr: "resources.apps[0].executable"},
		{name: "unrestricted disabled", args: []string{"call", "--mode", "unrestricted", "--dangerously-bypass-approvals", "get_session"}, env: []string{envDisableUnrestricted + "=1"}, wantExit: 2, wantStderr: "disabled by managed startup configuration"},
		{name: "unknown consent provider", args: []string{"call", "--consent", "ask", "get_session"}, wantExit: 2, wantStderr: "--consent"},
		{name: "bounded session reports its manifest", args: []string{"call", "--display", "private", "--mode", "bounded", "--manifest", good, "get_session"}, display: true, wantExit: 0, wantStdout: `"mode":"bounded"`},
		{name: "bounded session outside its manifest", args: []string{"call", "--display", "private", "--mode", "bounded", "--manifest", good, "health_report"}, display: true, wantExit: 1, wantStdout: "bounded_resource_outside_manifest"},
		{name: "standard without a provider", args: []string{"call", "--display", "private", "clipboard_read"}, display: true, wantExit: 1, wantStdout: "authorization_required"},
		{name: "reference environment without approval", args: []string{"call", "get_session"}, env: []string{envDriverPermissionMode + "=bounded", envDriverManifestFile + "=" + reference}, wantExit: 2, wantStderr: errMissingApproval},
		{name: "reference environment, unrestricted without bypass", args: []string{"call", "get_session"}, env: []string{envDriverPermissionMode + "=yolo"}, wantExit: 2, wantStderr: errMissingBypass},
		{name: "reference environment, approved manifest", args: []string{"call", "--display", "private", "end_session"}, env: []string{envDriverPermissionMode + "=bounded", envDriverManifestFile + "=" + reference, envDriverManifestApproved + "=1"}, display: true, wantExit: 0, wantStdout: `"ended":true`},
		{name: "reference environment, tool outside the manifest", args: []string{"call", "--display", "private", "get_session"}, env: []string{envDriverPermissionMode + "=bounded", envDriverManifestFile + "=" + reference, envDriverManifestApproved + "=1"}, display: true, wantExit: 1, wantStdout: "bounded_resource_outside_manifest"},
		{name: "a private display is the session's own", args: []string{"call", "--display", "private", "get_desktop_state", `{"max_dimension":64}`}, display: true, wantExit: 0, wantStdout: `"outcome":"completed"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.display {
				requireDisplayPrograms(t)
			}
			cmd := exec.Command(bin, tt.args...)
			cmd.Env = append(append(os.Environ(), "DISPLAY="), tt.env...)
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
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.wantStderr)
			}
			if !strings.Contains(string(out), tt.wantStdout) {
				t.Errorf("stdout %q lacks %q", out, tt.wantStdout)
			}
		})
	}
}
