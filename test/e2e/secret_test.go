package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"
)

// startRunCaptured is startRun with every byte of the MCP stream, both directions, copied
// to stream.
func startRunCaptured(t *testing.T, stream io.Writer, args ...string) *runProc {
	t.Helper()
	rp := &runProc{logPath: filepath.Join(t.TempDir(), "run.log"), stderr: &lockedBuffer{}}
	full := append([]string{"run", "--log-file", rp.logPath, "--log-level", "debug"}, args...)
	rp.cmd = exec.Command(cuaHost, full...)
	rp.cmd.Stderr = rp.stderr
	stdin, err := rp.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := rp.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	waited := false
	wait := func() {
		if !waited {
			waited = true
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				rp.cmd.Process.Kill()
				<-done
			}
		}
	}
	go func() { rp.cmd.Wait(); close(done) }()
	tr := &mcp.IOTransport{
		Reader: readCloser{io.TeeReader(stdout, stream), stdout},
		Writer: writeCloser{io.MultiWriter(stdin, stream), stdin},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cua-e2e", Version: "0"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		rp.cmd.Process.Kill()
		wait()
		t.Fatalf("connect to cua-host run %v: %v\nstderr: %s\nlog:\n%s", args, err, rp.stderr, rp.log())
	}
	rp.cs = cs
	t.Cleanup(func() {
		rp.close()
		stdin.Close()
		wait()
		if t.Failed() {
			t.Logf("cua-host run %v stderr: %s\nlog:\n%s", args, rp.stderr, rp.log())
		}
	})
	return rp
}

type readCloser struct {
	io.Reader
	io.Closer
}

type writeCloser struct {
	io.Writer
	io.Closer
}

// randomSecret is a secret no log line, id or screenshot byte could match by chance: 40
// random letters and digits, with upper case, digits, punctuation and a space around them.
func randomSecret(t *testing.T) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 40)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "Q7!" + string(b[:20]) + " #" + string(b[20:]) + ",.?"
}

// grepTree reports the files under dir whose content holds needle.
func grepTree(t *testing.T, dir string, needle []byte) []string {
	t.Helper()
	var hits []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, needle) {
			hits = append(hits, p)
		}
		return nil
	})
	return hits
}

// writerOf returns the pid of a process whose standard output is file.
func writerOf(file string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink(filepath.Join("/proc", e.Name(), "fd", "1")); err == nil && l == file {
			return pid
		}
	}
	return 0
}

// TestTypeSecret types a credential from --secrets-dir into a real password field, the
// password entry of a `zenity --password --username` dialog, which prints what it got on
// OK (the witness, a file). While the dialog's focus is on its user name entry, and
// into a terminal the session launched (whose cat writes what it receives to a file, the
// second witness), type_secret is refused permission_denied and types nothing; once the
// operator marks the credential any_field in .attributes.json it types into the terminal
// too. get_window_state of the dialog never shows the secret. Then the test looks for the
// secret in every byte the agent, the operator's logs and the journal got, and in the
// memory of the host and the worker after type_secret returned: it is in none of
// them. A positive control (the memory of the terminal's cat, which did read the secret)
// shows the search finds what is there. The launched programs cannot see the directory.
func TestTypeSecret(t *testing.T) {
	needDesktop(t)
	need(t, "zenity")
	secret := randomSecret(t)
	needle := []byte(secret)
	root := t.TempDir()
	secrets := filepath.Join(root, "secrets")
	if err := os.Mkdir(secrets, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secrets, "mail-login"), []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	attributes := func(extra string) {
		t.Helper()
		a := `{"mail-login": {"url": "https://mail.example", "username": "ada"` + extra + `}}`
		if err := os.WriteFile(filepath.Join(secrets, ".attributes.json"), []byte(a), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	attributes("")
	// Outside the directory: a symbolic link inside points here, and no call may open it.
	outsideDir := filepath.Join(root, "outside")
	if err := os.Mkdir(outsideDir, 0o700); err != nil {
		t.Fatal(err)
	}
	outsideSecret := randomSecret(t)
	if err := os.WriteFile(filepath.Join(outsideDir, "x"), []byte(outsideSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outsideDir, "x"), filepath.Join(secrets, "link")); err != nil {
		t.Fatal(err)
	}
	journalDir := filepath.Join(root, "journal")
	out := filepath.Join(root, "typed.txt")
	entered := filepath.Join(root, "entered.txt")
	probe := filepath.Join(root, "probe.txt")
	var stream lockedBuffer
	rp := startRunCaptured(t, &stream, append(append([]string(nil), unrestricted...), "--secrets-dir", secrets,
		"--journal", journalDir, "--journal-text")...)

	_, found := rp.mustCall(t, "find_credentials", map[string]any{"query": "MAIL", "attributes": map[string]any{"username": "ada"}})
	creds, _ := found["credentials"].([]any)
	if len(creds) != 1 {
		t.Fatalf("find_credentials = %v, want mail-login alone", found)
	}
	c, _ := creds[0].(map[string]any)
	attrs, _ := c["attributes"].(map[string]any)
	if c["handle"] != "mail-login" || attrs["url"] != "https://mail.example" {
		t.Fatalf("find_credentials entry = %v, want mail-login with its url", c)
	}
	if _, all := rp.mustCall(t, "find_credentials", map[string]any{}); len(all["credentials"].([]any)) != 1 {
		t.Errorf("find_credentials {} = %v, want only mail-login (no link, no dot file)", all)
	}

	// The password dialog; what it prints on OK is the witness.
	_, launched := rp.mustCall(t, "launch_app", map[string]any{"name": "sh",
		"additional_arguments": []string{"-c", "exec zenity --password --username --title cua-password > " + entered}})
	dialog := map[string]any{"pid": number(launched, "pid"), "window_id": int(firstWindow(t, launched))}
	var state string
	if !waitFor(15*time.Second, func() bool {
		res := rp.call(t, "get_window_state", merge(dialog, map[string]any{"include_screenshot": false}))
		state = text(res)
		return strings.Contains(state, "password text")
	}) {
		t.Fatalf("the dialog's accessible tree never showed a password field: %s", state)
	}

	// Refusals first: nothing may be typed, and nothing outside the directory opened.
	ino, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(ino)
	if _, err := unix.InotifyAddWatch(ino, outsideDir, unix.IN_OPEN|unix.IN_ACCESS); err != nil {
		t.Fatal(err)
	}
	for _, handle := range []string{"nope", "../outside/x", "a/b", filepath.Join(outsideDir, "x"), "link", "..", ".attributes.json"} {
		res := rp.call(t, "type_secret", merge(dialog, map[string]any{"handle": handle}))
		if code := refusalCode(t, res); code != "credential_not_found" || outcomeOf(res) != "not_started" {
			t.Errorf("type_secret %q = %s %v %q, want a not_started credential_not_found refusal", handle, code, outcomeOf(res), text(res))
		}
	}
	buf := make([]byte, 4096)
	if n, _ := unix.Read(ino, buf); n > 0 {
		t.Errorf("the refused calls opened or read something in %s (%d bytes of inotify events)", outsideDir, n)
	}

	// The dialog opens with the focus on its user name entry, a field that shows its text.
	res := rp.call(t, "type_secret", merge(dialog, map[string]any{"handle": "mail-login"}))
	if code := refusalCode(t, res); code != "permission_denied" || outcomeOf(res) != "not_started" || !strings.Contains(text(res), `is a "text"`) {
		t.Errorf("type_secret into the user name entry = %s %v %q, want a not_started permission_denied refusal naming the focused \"text\"", code, outcomeOf(res), text(res))
	}
	rp.mustCall(t, "type_text", merge(dialog, map[string]any{"text": "ada\t"}))

	res, st := rp.mustCall(t, "type_secret", merge(dialog, map[string]any{"handle": "mail-login"}))
	if d, _ := st["delivery"].(map[string]any); number(d, "delivered_count") != 1 {
		t.Errorf("type_secret delivery = %v, want delivered_count 1", st["delivery"])
	}
	ev, _ := detailsOf(res)["evidence"].(map[string]any)
	if f, _ := ev["password_field"].(map[string]any); f["focus_after"] != "still on the password field" {
		t.Errorf("type_secret evidence = %v, want the password field still focused after the keys", ev)
	}
	resJSON, _ := json.Marshal(res)
	if n := strconv.Itoa(len(secret)); bytes.Contains(resJSON, []byte(`"chars"`)) || strings.Contains(text(res), n) {
		t.Errorf("type_secret's result %s tells the secret's length", resJSON)
	}
	// What the agent can read of the dialog: its tree shows the field, never its text.
	res, _ = rp.mustCall(t, "get_window_state", merge(dialog, map[string]any{"include_screenshot": false}))
	stateJSON, _ := json.Marshal(res)
	if !bytes.Contains(stateJSON, []byte("password text")) || !bytes.Contains(stateJSON, []byte("ada")) {
		t.Errorf("get_window_state of the dialog does not show its fields (the search looked at the wrong thing): %s", stateJSON)
	}
	for _, part := range []string{secret, secret[:8], secret[len(secret)-8:]} {
		if bytes.Contains(stateJSON, []byte(part)) {
			t.Errorf("get_window_state of the dialog shows the secret (%d characters of it)", len(part))
		}
	}

	// Core dumps after type_secret returned: the host (cua-host run) and its worker.
	worker, ok := find(descendants(rp.cmd.Process.Pid), "__worker")
	if !ok {
		t.Fatal("no worker process")
	}
	for _, p := range []struct {
		role, arg string
		pid       int
	}{{"host", "--secrets-dir", rp.cmd.Process.Pid}, {"worker", "__worker", worker.pid}} {
		// Control: the search finds the process's own command line.
		if !memoryHolds(t, p.pid, []byte(p.arg)) {
			t.Errorf("the search of the %s's memory (pid %d) does not find %q of its command line: it proves nothing", p.role, p.pid, p.arg)
		}
		if memoryHolds(t, p.pid, needle) {
			t.Errorf("the %s's memory (pid %d) holds the secret after type_secret returned", p.role, p.pid)
		}
	}

	rp.mustCall(t, "press_key", merge(dialog, map[string]any{"key": "Return"}))
	if !waitFor(15*time.Second, func() bool { b, _ := os.ReadFile(entered); return len(b) > 0 }) {
		t.Fatalf("the dialog wrote nothing to %s", entered)
	}
	if got, _ := os.ReadFile(entered); string(got) != "ada|"+secret+"\n" {
		t.Errorf("the dialog received %q, want %q (the refused call typed nothing)", got, "ada|"+secret+"\n")
	}

	// A terminal: not a password field. It first tries to read the secrets directory,
	// then types into the file.
	script := "ls -A " + secrets + " > " + probe + ".ls 2>&1; cat " + secrets + "/mail-login > " + probe + ".cat 2>&1; stty -echo; exec cat > " + out
	_, launched = rp.mustCall(t, "launch_app", map[string]any{"name": "xterm",
		"additional_arguments": []string{"-title", "cua-secret", "-e", "sh", "-c", script}})
	term := map[string]any{"pid": number(launched, "pid"), "window_id": int(firstWindow(t, launched))}
	if !waitFor(15*time.Second, func() bool { return writerOf(out) != 0 }) {
		t.Fatalf("the terminal's cat never started writing %s", out)
	}
	listed, _ := os.ReadFile(probe + ".ls")
	read, _ := os.ReadFile(probe + ".cat")
	if bytes.Contains(read, needle) || !bytes.Contains(read, []byte("No such file")) || slices.Contains(strings.Fields(string(listed)), "mail-login") {
		t.Errorf("inside the sandbox, ls of the secrets directory wrote %q and cat of a secret %q: want nothing there", listed, read)
	}
	res = rp.call(t, "type_secret", merge(term, map[string]any{"handle": "mail-login"}))
	if code := refusalCode(t, res); code != "permission_denied" || outcomeOf(res) != "not_started" || !strings.Contains(text(res), "any_field") {
		t.Errorf("type_secret into the terminal = %s %v %q, want a not_started permission_denied refusal naming any_field", code, outcomeOf(res), text(res))
	}
	// The operator allows the credential in any field: the terminal gets it. The file is
	// read at each call.
	attributes(`, "any_field": "true"`)
	res, _ = rp.mustCall(t, "type_secret", merge(term, map[string]any{"handle": "mail-login"}))
	if ev, _ := detailsOf(res)["evidence"].(map[string]any); !strings.Contains(fmt.Sprint(ev["password_field"]), "any_field") {
		t.Errorf("type_secret with any_field: evidence %v, want it to say the field was not checked", ev)
	}
	rp.mustCall(t, "press_key", merge(term, map[string]any{"key": "Return"}))
	if !waitFor(15*time.Second, func() bool { b, _ := os.ReadFile(out); return len(b) > 0 }) {
		t.Fatalf("the terminal wrote nothing to %s", out)
	}
	if got, _ := os.ReadFile(out); string(got) != secret+"\n" {
		t.Errorf("the terminal received %q, want %q (only the secret: the refused calls typed nothing)", got, secret+"\n")
	}
	// Positive control: cat read the secret, and a dump of its memory shows it.
	if cat := writerOf(out); cat == 0 || !memoryHolds(t, cat, needle) {
		t.Errorf("the memory of the terminal's cat (pid %d) does not show the secret it read: the search finds nothing", cat)
	}

	if err := rp.close(); err != nil {
		t.Fatalf("cua-host run exit: %v", err)
	}
	for name, data := range map[string]string{"the MCP stream": stream.String(), "the logs": rp.log(), "stderr": rp.stderr.String()} {
		if strings.Contains(data, secret) || strings.Contains(data, outsideSecret) {
			t.Errorf("%s holds a secret", name)
		}
	}
	if !strings.Contains(stream.String(), `"type_secret"`) || !strings.Contains(rp.log(), "type_secret") {
		t.Errorf("the captured stream or the debug log does not show the type_secret call: the search looked at the wrong thing")
	}
	if hits := grepTree(t, journalDir, needle); len(hits) > 0 {
		t.Errorf("the journal holds the secret in %v", hits)
	}
	if hits := grepTree(t, journalDir, []byte("mail-login")); len(hits) == 0 {
		t.Errorf("the journal does not record the type_secret call: the search looked at the wrong place")
	}
}

// TestSecretsNoStore: without --secrets-dir both tools are refused unsupported, naming
// the flag.
func TestSecretsNoStore(t *testing.T) {
	needDesktop(t)
	rp := startRun(t, unrestricted...)
	res := rp.call(t, "find_credentials", map[string]any{})
	if code := refusalCode(t, res); code != "unsupported" || !strings.Contains(text(res), "--secrets-dir") {
		t.Errorf("find_credentials without a store = %s %q, want unsupported naming --secrets-dir", code, text(res))
	}
	_, launched := rp.mustCall(t, "launch_app", map[string]any{"name": "xterm", "additional_arguments": []string{"-title", "cua-nostore"}})
	ids, _ := launched["window_ids"].([]any)
	if len(ids) == 0 {
		t.Fatalf("launch_app xterm = %v", launched)
	}
	res = rp.call(t, "type_secret", map[string]any{"pid": number(launched, "pid"), "window_id": int(ids[0].(float64)), "handle": "x"})
	if code := refusalCode(t, res); code != "unsupported" || !strings.Contains(text(res), "--secrets-dir") {
		t.Errorf("type_secret without a store = %s %q, want unsupported naming --secrets-dir", code, text(res))
	}
}
