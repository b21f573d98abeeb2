package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// cuaEnv runs cua-host with env added to this process's environment and returns its
// combined output and exit status.
func cuaEnv(t testing.TB, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(cuaHost, args...)
	cmd.Env = append(os.Environ(), env...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("cua-host %v: %v", args, err)
	}
	return b.String(), cmd.ProcessState.ExitCode()
}

// TestNestedSessionStart: `cua-host session start` with the default --display (auto) on a
// person's display starts a nested display of the session's own: its window appears on
// the person's display titled with the session's label, calls through `cua-host call
// --session` run there (health_report names a private display that is not the person's),
// and `session stop` takes the window away. The person's pointer and focus never move.
// Oracles: xwininfo and xdotool on the person's display.
func TestNestedSessionStart(t *testing.T) {
	needDesktop(t)
	need(t, "Xephyr", "xdotool", "xwininfo")
	p := startPerson(t)
	env := append(p.d.Env(), "HOME="+t.TempDir(), "LANG=C.UTF-8")
	out, code := cuaEnv(t, env, "session", "start", "--label", "cli-nested", "--mode", "unrestricted",
		"--dangerously-bypass-approvals", "--screen", "640x480", "--json", "--runtime-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("session start = %d:\n%s", code, out)
	}
	var info struct {
		Display  string `json:"display"`
		Endpoint struct {
			Unix string `json:"unix"`
		} `json:"endpoint"`
	}
	line := out
	if i := strings.Index(out, "{"); i >= 0 {
		line = out[i:]
	}
	if err := json.NewDecoder(strings.NewReader(line)).Decode(&info); err != nil || info.Endpoint.Unix == "" {
		t.Fatalf("session start printed no session: %v\n%s", err, out)
	}
	t.Cleanup(func() { cuaEnv(t, env, "session", "stop", info.Endpoint.Unix) })
	if info.Display == "" || info.Display == p.d.Name() {
		t.Errorf("the session's display is %q, want a nested display of its own (the person's is %s)", info.Display, p.d.Name())
	}
	const title = "cua-host: cli-nested"
	if !waitFor(10*time.Second, func() bool { return strings.Contains(p.tree(), `"`+title+`"`) }) {
		t.Fatalf("no window %q on the person's display:\n%s", title, p.tree())
	}
	p.untouched("after session start")

	res, code := cuaEnv(t, env, "call", "--session", info.Endpoint.Unix, "health_report")
	if code != 0 || !strings.Contains(res, `"private_display": true`) && !strings.Contains(res, `"private_display":true`) {
		t.Errorf("call health_report = %d:\n%s", code, res)
	}
	if strings.Contains(res, `"display": "`+p.d.Name()+`"`) || strings.Contains(res, `"display":"`+p.d.Name()+`"`) {
		t.Errorf("health_report names the person's display %s:\n%s", p.d.Name(), res)
	}
	p.untouched("after a call")

	if res, code := cuaEnv(t, env, "session", "stop", info.Endpoint.Unix); code != 0 {
		t.Errorf("session stop = %d:\n%s", code, res)
	}
	if !waitFor(10*time.Second, func() bool { return !strings.Contains(p.tree(), `"`+title+`"`) }) {
		t.Errorf("the nested window stays after session stop:\n%s", p.tree())
	}
	p.untouched("after session stop")
}

// TestNestedReplay: a journal recorded on a private display is replayed with
// --display nested in a window on the person's display: the replay's terminal writes the
// file again (the oracle), the window shows while it runs and is gone afterwards, and the
// person's pointer and focus never move.
func TestNestedReplay(t *testing.T) {
	needDesktop(t)
	need(t, "Xephyr", "xdotool", "xwininfo")
	dir, out := recordEcho(t, "replayed-nested")

	p := startPerson(t)
	env := append(p.d.Env(), "HOME="+t.TempDir(), "LANG=C.UTF-8")
	seen := make(chan bool, 1)
	go func() {
		seen <- waitFor(30*time.Second, func() bool {
			tree, err := p.treeOrErr() // a failed walk (a window went away) is tried again
			return err == nil && strings.Contains(tree, `"cua-host: cli"`)
		})
	}()
	res, code := cuaEnv(t, env, "replay", dir, "--display", "nested", "--dangerously-bypass-approvals", "--max-wait", "500ms", "--hold", "3s")
	t.Logf("cua-host replay --display nested:\n%s", res)
	if code != 0 {
		t.Fatalf("replay = %d, want 0", code)
	}
	if !<-seen {
		t.Errorf("the replay's nested window never showed on the person's display")
	}
	if b, _ := os.ReadFile(out); string(b) != "replayed-nested\n" {
		t.Errorf("the replay's terminal wrote %q, want %q", b, "replayed-nested\n")
	}
	if strings.Contains(p.tree(), `"cua-host: cli"`) {
		t.Errorf("the nested window stays after the replay:\n%s", p.tree())
	}
	p.untouched("after the replay")
}
