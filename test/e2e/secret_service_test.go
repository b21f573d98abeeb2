package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/internal/secretservice"
	"github.com/cua-host/cua-host/test/testkit"
)

// TestTypeSecretFromSecretService runs `cua-host run --secret-service service=cua-e2e`
// against gnome-keyring-daemon on a bus of its own, standing for the person's session
// bus. Two items are stored with secret-tool, one the selection matches and one it does
// not. find_credentials lists the matching one alone; type_secret types it exactly into
// the password entry of a zenity dialog (the witness: what the dialog prints on OK); the
// other cannot be typed (credential_not_found); with the keyring locked the call is
// refused unsupported and nothing is typed. A dbus-monitor capture of the bus during the
// call shows GetSecret in an encrypted session and not the secret, and neither do the MCP
// stream, the logs or stderr. A program the session launches does not see the bus's
// socket.
func TestTypeSecretFromSecretService(t *testing.T) {
	needDesktop(t)
	need(t, "zenity")
	need(t, testkit.KeyringPrograms...)
	kr := testkit.StartKeyring(t)
	secret := randomSecret(t)
	other := randomSecret(t)
	kr.Store(t, "mail login", []byte(secret), "service", "cua-e2e", "user", "ada", "url", "https://mail.example")
	kr.Store(t, "bank", []byte(other), "service", "other-e2e", "user", "ada")
	// The host reads the person's bus from its environment.
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", kr.Addr)
	root := t.TempDir()
	entered := filepath.Join(root, "entered.txt")
	probe := filepath.Join(root, "probe.txt")
	var stream lockedBuffer
	rp := startRunCaptured(t, &stream, append(append([]string(nil), unrestricted...), "--secret-service", "service=cua-e2e")...)

	_, found := rp.mustCall(t, "find_credentials", map[string]any{})
	creds, _ := found["credentials"].([]any)
	if len(creds) != 1 {
		t.Fatalf("find_credentials = %v, want the matching item alone", found)
	}
	c, _ := creds[0].(map[string]any)
	attrs, _ := c["attributes"].(map[string]any)
	if c["handle"] != "mail login" || c["label"] != "mail login" || attrs["url"] != "https://mail.example" || attrs["service"] != "cua-e2e" {
		t.Fatalf("find_credentials entry = %v, want \"mail login\" with its attributes", c)
	}

	// The bus's socket is hidden from launched programs.
	sock := strings.TrimPrefix(strings.Split(kr.Addr, ",")[0], "unix:path=")
	rp.mustCall(t, "launch_app", map[string]any{"name": "sh",
		"additional_arguments": []string{"-c", "if [ -S " + sock + " ]; then echo socket; else echo hidden; fi > " + probe}})
	if !waitFor(15*time.Second, func() bool { b, _ := os.ReadFile(probe); return len(b) > 0 }) {
		t.Fatalf("the launched probe wrote nothing to %s", probe)
	}
	if b, _ := os.ReadFile(probe); string(b) != "hidden\n" {
		t.Errorf("a launched program sees the person's bus socket %s: %q", sock, b)
	}
	if st, err := os.Stat(sock); err != nil || st.Mode()&os.ModeSocket == 0 {
		t.Fatalf("outside the sandbox %s is not a socket (%v): the probe looked at the wrong path", sock, err)
	}

	_, launched := rp.mustCall(t, "launch_app", map[string]any{"name": "sh",
		"additional_arguments": []string{"-c", "exec zenity --password --username --title cua-keyring > " + entered}})
	dialog := map[string]any{"pid": number(launched, "pid"), "window_id": int(firstWindow(t, launched))}
	var state string
	if !waitFor(15*time.Second, func() bool {
		state = text(rp.call(t, "get_window_state", merge(dialog, map[string]any{"include_screenshot": false})))
		return strings.Contains(state, "password text")
	}) {
		t.Fatalf("the dialog's accessible tree never showed a password field: %s", state)
	}
	rp.mustCall(t, "type_text", merge(dialog, map[string]any{"text": "ada\t"}))

	for _, handle := range []string{"bank", "nope"} {
		res := rp.call(t, "type_secret", merge(dialog, map[string]any{"handle": handle}))
		if code := refusalCode(t, res); code != "credential_not_found" || outcomeOf(res) != "not_started" {
			t.Errorf("type_secret %q = %s %v %q, want a not_started credential_not_found refusal", handle, code, outcomeOf(res), text(res))
		}
	}

	stop := testkit.MonitorBus(t, kr.Addr)
	res := rp.call(t, "type_secret", merge(dialog, map[string]any{"handle": "mail login"}))
	captured := stop()
	st := structured(t, res)
	if res.IsError || outcomeOf(res) != "completed" {
		t.Fatalf("type_secret \"mail login\" = %v %q, want it typed", st, text(res))
	}
	if d, _ := st["delivery"].(map[string]any); number(d, "delivered_count") != 1 {
		t.Errorf("type_secret delivery = %v, want delivered_count 1", st["delivery"])
	}
	if ev, _ := detailsOf(res)["evidence"].(map[string]any); ev["password_field"] == nil {
		t.Errorf("type_secret evidence = %v, want the password field checked", ev)
	}
	if !bytes.Contains(captured, []byte("GetSecret")) || !bytes.Contains(captured, []byte(secretservice.Algorithm)) {
		t.Fatalf("the bus capture (%d bytes) shows no GetSecret in an encrypted session: the monitor saw nothing", len(captured))
	}
	for _, part := range []string{secret, secret[:12], secret[len(secret)-12:]} {
		if bytes.Contains(captured, []byte(part)) {
			t.Errorf("the bus capture holds the secret (%d characters of it)", len(part))
		}
	}

	// Locked: refused, and the person is not asked (nothing is typed either).
	kr.Lock(t)
	res = rp.call(t, "type_secret", merge(dialog, map[string]any{"handle": "mail login"}))
	if code := refusalCode(t, res); code != "unsupported" || outcomeOf(res) != "not_started" || !strings.Contains(text(res), "locked") {
		t.Errorf("type_secret with the keyring locked = %s %v %q, want a not_started unsupported refusal saying it is locked", code, outcomeOf(res), text(res))
	}

	rp.mustCall(t, "press_key", merge(dialog, map[string]any{"key": "Return"}))
	if !waitFor(15*time.Second, func() bool { b, _ := os.ReadFile(entered); return len(b) > 0 }) {
		t.Fatalf("the dialog wrote nothing to %s", entered)
	}
	if got, _ := os.ReadFile(entered); string(got) != "ada|"+secret+"\n" {
		t.Errorf("the dialog received %q, want %q (exactly the secret; the refused calls typed nothing)", got, "ada|"+secret+"\n")
	}

	if err := rp.close(); err != nil {
		t.Fatalf("cua-host run exit: %v", err)
	}
	for name, data := range map[string]string{"the MCP stream": stream.String(), "the logs": rp.log(), "stderr": rp.stderr.String()} {
		if strings.Contains(data, secret) || strings.Contains(data, other) {
			t.Errorf("%s holds a secret", name)
		}
	}
	if !strings.Contains(stream.String(), `"type_secret"`) || !strings.Contains(rp.log(), "type_secret") {
		t.Errorf("the captured stream or the debug log does not show the type_secret call: the search looked at the wrong thing")
	}
}
