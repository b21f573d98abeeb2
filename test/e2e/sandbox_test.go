package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNoSandboxRefusesLaunches: where bubblewrap cannot confine programs (here it is made
// to fail, bound over by /bin/false in a mount namespace of the test's own, the way a
// kernel without unprivileged user namespaces makes it fail), `cua-host status` says so and
// launch_app is refused before anything runs — never an unconfined launch. With `--sandbox
// off` the operator gets the unconfined launch they asked for. Needs root (for the mount
// namespace); skipped otherwise.
func TestNoSandboxRefusesLaunches(t *testing.T) {
	needDesktop(t)
	need(t, "unshare", "bwrap")
	if os.Geteuid() != 0 {
		t.Skip("making bubblewrap fail needs a mount namespace, which needs root here")
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Fatal(err)
	}
	// run runs cua-host with ARGS where bubblewrap fails, without a display in the
	// environment (call starts a private one).
	run := func(args ...string) string {
		script := `mount --bind /bin/false "$1" && shift && exec "$@"`
		cmd := exec.Command("unshare", append([]string{"-m", "sh", "-c", script, "sh", bwrap, cuaHost}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := run("status"); !strings.Contains(out, "sandbox:") || !strings.Contains(out, "launch_app is refused") {
		t.Errorf("status where bubblewrap fails does not say launches are refused:\n%s", out)
	}
	var res struct {
		Outcome string `json:"outcome"`
		Refusal *struct {
			Code, Message string
		} `json:"refusal"`
		Structured json.RawMessage `json:"structured"`
	}
	out := run("call", "--display", "private", "launch_app", `{"name":"xterm"}`)
	if err := json.Unmarshal([]byte(lastLine(out)), &res); err != nil {
		t.Fatalf("call launch_app: %v\n%s", err, out)
	}
	if res.Outcome != "not_started" || res.Refusal == nil || !strings.Contains(res.Refusal.Message, "sandbox") {
		t.Errorf("launch_app where bubblewrap fails = %+v, want a not_started refusal naming the sandbox\n%s", res, out)
	}
	out = run("call", "--display", "private", "--sandbox", "off", "launch_app", `{"name":"xterm","timeout_ms":0}`)
	if err := json.Unmarshal([]byte(lastLine(out)), &res); err != nil {
		t.Fatalf("call launch_app --sandbox off: %v\n%s", err, out)
	}
	if res.Outcome != "completed" || res.Refusal != nil || !strings.Contains(string(res.Structured), `"sandboxed":false`) {
		t.Errorf("launch_app --sandbox off = %s %+v %s, want an unconfined launch\n%s", res.Outcome, res.Refusal, res.Structured, out)
	}
}

// lastLine is the last non-empty line of out.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}
