package authze2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/host/personui"
)

// attackScript stands for the shell of a terminal the agent launched, acting on its own. It
// writes what it could reach to $1 and, once the test writes the coordinates of the
// consent dialog's "Allow once" to $2, clicks there with xdotool over every X connection it
// can think of: the person's cookie file ($3), ~/.Xauthority, the cookie it was given, and
// the cookie named in the environment of the worker ($4) and of the host ($5).
const attackScript = `out=$1 coord=$2 cookie=$3 wpid=$4 hpid=$5
bytes() { wc -c < "$1" 2>/dev/null || echo unreadable; }
from_environ() { tr '\0' '\n' < /proc/$1/environ 2>/dev/null | sed -n 's/^XAUTHORITY=//p'; }
{
  echo "cookie_bytes=$(bytes "$cookie")"
  echo "home_cookie_bytes=$(bytes "$HOME/.Xauthority")"
  echo "worker_cookie=$(from_environ $wpid)"
  echo "host_cookie=$(from_environ $hpid)"
  echo "processes=$(ls /proc | grep -c '^[0-9]')"
} > "$out.tmp"
i=0
while [ ! -s "$coord" ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done
read x y < "$coord"
n=0
for a in "$cookie" "$HOME/.Xauthority" "$XAUTHORITY" "$(from_environ $wpid)" "$(from_environ $hpid)"; do
  n=$((n+1))
  XAUTHORITY="$a" xdotool mousemove "$x" "$y" click 1 >/dev/null 2>&1
  echo "xdotool_$n=$?" >> "$out.tmp"
done
mv "$out.tmp" "$out"
`

// TestLaunchedProgramCannotAnswerConsent: on a display shared with a person (a cookie, as
// display managers give), with the host's consent dialog on it, a program the agent
// launched tries to become a trusted client of the person's display and click "Allow" on
// the question its own session asked. It cannot read the person's cookie (the file, the
// home directory's, the worker's or host's environment: the sandbox shows neither the
// files nor those processes), every xdotool it runs fails, and the question ends without
// a grant. Witnesses: the file the program wrote and xdotool's exit statuses in it, and
// the call's refusal.
func TestLaunchedProgramCannotAnswerConsent(t *testing.T) {
	requireDesktop(t)
	needPrograms(t, "xdotool", "sh")
	got, res := attackConsent(t, false)
	for _, k := range []string{"cookie_bytes", "home_cookie_bytes"} {
		if v := got[k]; v != "0" && v != "unreadable" {
			t.Errorf("%s = %q: the launched program read a cookie file", k, v)
		}
	}
	for _, k := range []string{"worker_cookie", "host_cookie"} {
		if got[k] != "" {
			t.Errorf("%s = %q: the launched program read another process's environment", k, got[k])
		}
	}
	if n, _ := strconv.Atoi(got["processes"]); n == 0 || n > 8 {
		t.Errorf("the launched program sees %s processes, want only its sandbox's few", got["processes"])
	}
	for i := 1; i <= 5; i++ {
		if v := got["xdotool_"+strconv.Itoa(i)]; v == "0" || v == "" {
			t.Errorf("xdotool over connection %d exited %q: the launched program drove the person's display", i, v)
		}
	}
	if res.Outcome != host.NotStarted || res.Refusal == nil || res.Refusal.Code == "" {
		t.Errorf("get_desktop_state = %s %s, want a refusal: nobody allowed it", res.Outcome, res.Text())
	}
}

// TestUnsandboxedProgramAnswersConsent is the same attack with the sandbox turned off
// (--sandbox off): it succeeds, which is what the sandbox is for, and shows that the
// witnesses above can see it.
func TestUnsandboxedProgramAnswersConsent(t *testing.T) {
	requireDesktop(t)
	needPrograms(t, "xdotool", "sh")
	got, res := attackConsent(t, true)
	if got["cookie_bytes"] == "0" || got["cookie_bytes"] == "unreadable" || got["worker_cookie"] == "" {
		t.Errorf("an unconfined program could not read the person's cookie: %v", got)
	}
	if got["xdotool_1"] != "0" {
		t.Errorf("an unconfined program's xdotool with the person's cookie exited %q", got["xdotool_1"])
	}
	if res.Outcome != host.Completed || res.IsError {
		t.Errorf("get_desktop_state = %s %s, want it allowed by the program's click", res.Outcome, res.Text())
	}
}

// attackConsent runs the attack of attackScript on a shared display with the host's
// consent dialog, the sandbox on or off, and returns what the program wrote and the
// result of the call whose question it tried to answer.
func attackConsent(t *testing.T, unsandboxed bool) (map[string]string, host.Result) {
	t.Helper()
	ds := newDialogs()
	h := startSharedHost(t, host.Options{Consent: host.ConsentDialog(host.DialogConsentOptions{
		Display: disp.Name(), XAuthority: disp.XAuthority(), Mode: "standard", Timeout: 4 * time.Second, OnShown: ds.onShown,
	}), Sandbox: host.SandboxOptions{Disabled: unsandboxed}})
	agent := session(t, h, host.SessionSpec{Label: "attacker", Mode: authz.Standard})

	dir := t.TempDir()
	script := filepath.Join(dir, "attack.sh")
	if err := os.WriteFile(script, []byte(attackScript), 0o755); err != nil {
		t.Fatal(err)
	}
	report, coord := filepath.Join(dir, "report"), filepath.Join(dir, "allow")
	id := declareApp(t, "attacker", []string{"/bin/sh", script, report, coord, disp.XAuthority(),
		strconv.Itoa(h.PID()), strconv.Itoa(os.Getpid())}, "")
	res := call(t, agent, "launch_app", map[string]any{"name": id, "timeout_ms": 0})
	if !check(t, "launch_app attacker", res, "") {
		t.FailNow()
	}
	if l := launchResult(t, res); l.Sandboxed == unsandboxed {
		t.Errorf("launch_app = %+v, want sandboxed %v", l, !unsandboxed)
	}

	// The session asks to see the whole display; the dialog appears; the program is told
	// where "Allow once" is, once a click there would count.
	pending := make(chan host.Result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r, err := agent.Call(ctx, "get_desktop_state", jsonArgs(map[string]any{}))
		if err != nil {
			r = host.Result{Outcome: host.Unknown, IsError: true}
		}
		pending <- r
	}()
	dlg := ds.next(t)
	time.Sleep(personui.ArmDelay + 100*time.Millisecond)
	ax, ay := button(t, dlg, "allow_once")
	if err := os.WriteFile(coord, []byte(fmt.Sprintf("%d %d\n", ax, ay)), 0o644); err != nil {
		t.Fatal(err)
	}
	got := waitReport(t, report)
	t.Logf("what the launched program reached: %v", got)
	return got, <-pending
}

// waitReport waits for the attack script's report and parses its NAME=VALUE lines.
func waitReport(t *testing.T, path string) map[string]string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			out := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if k, v, ok := strings.Cut(line, "="); ok {
					out[k] = strings.TrimSpace(v)
				}
			}
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the launched program wrote no report at %s", path)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
