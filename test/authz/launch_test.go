package authze2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/test/testkit"
)

// launched is the structured result of launch_app.
type launched struct {
	PID       int      `json:"pid"`
	Argv      []string `json:"argv"`
	Command   string   `json:"command"`
	DesktopID string   `json:"desktop_id"`
	Declared  bool     `json:"declared"`
	Untrusted bool     `json:"untrusted_x_client"`
	Sandboxed bool     `json:"sandboxed"`
	WindowIDs []uint32 `json:"window_ids"`
	Exited    bool     `json:"exited"`
	ExitCode  *int     `json:"exit_code"`
	Warnings  []string `json:"warnings"`
}

func launchResult(t testing.TB, res host.Result) launched {
	t.Helper()
	var l launched
	if err := json.Unmarshal(res.Structured, &l); err != nil {
		t.Fatalf("launch_app result %s: %v", res.Structured, err)
	}
	return l
}

// cmdline reads a process's argument vector from /proc: the oracle for what runs.
func cmdline(t testing.TB, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatalf("read cmdline of %d: %v", pid, err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

func needPrograms(t testing.TB, names ...string) map[string]string {
	t.Helper()
	testkit.NeedPrograms(t, names...)
	paths := map[string]string{}
	for _, n := range names {
		paths[n], _ = exec.LookPath(n)
	}
	return paths
}

// focus gives the user's window the keyboard focus, as the user would.
func focus(t testing.TB, a *app) {
	t.Helper()
	xdoMu.Lock()
	defer xdoMu.Unlock()
	if out, err := exec.Command("xdotool", "windowactivate", "--sync", fmt.Sprint(a.Window)).CombinedOutput(); err != nil {
		t.Fatalf("xdotool windowactivate: %v: %s", err, out)
	}
}

// waitExit waits until pid no longer runs.
func waitExit(t testing.TB, pid int, within time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(within)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// TestLaunchStandardIsNotCodeExecution: in standard mode without a consent provider,
// launch_app runs declared desktop applications only; a program that is no desktop entry,
// free arguments and launch_path are refused with authorization_required and nothing
// runs. xevlog is the oracle for typed keys, /proc for what runs, files for side effects.
func TestLaunchStandardIsNotCodeExecution(t *testing.T) {
	requireDesktop(t)
	progs := needPrograms(t, "xdotool", "bash", "kill", "xwininfo")
	target := startApp(t, appB, "launch-target")
	place(t, target, 0, 460)
	h := startHost(t, host.Options{})
	s := session(t, h, host.SessionSpec{Label: "std"})
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")

	focus(t, target)
	refused := []struct {
		name string
		args map[string]any
	}{
		{"xdotool type", map[string]any{"name": "xdotool", "additional_arguments": []string{"type", "--delay", "1", "pwned"}}},
		{"kill the worker", map[string]any{"name": "kill", "additional_arguments": []string{"-TERM", fmt.Sprint(h.PID())}}},
		{"bash -c", map[string]any{"name": "bash", "additional_arguments": []string{"-c", "touch " + marker}}},
		{"launch_path", map[string]any{"launch_path": progs["bash"], "additional_arguments": []string{"-c", "touch " + marker}}},
		{"launch_path without arguments", map[string]any{"launch_path": appA}},
		{"absolute path as name", map[string]any{"name": progs["xdotool"], "additional_arguments": []string{"type", "pwned"}}},
		{"a declared app's program with free arguments", map[string]any{"name": appA, "additional_arguments": []string{"-title", "free"}}},
	}
	for _, r := range refused {
		check(t, r.name, call(t, s, "launch_app", r.args), authz.CodeAuthorizationRequired)
	}
	// Nothing ran: the worker lives, no marker, and the focused window got no key.
	check(t, "noop after the refused kill", call(t, s, "noop", nil), "")
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("a refused bash -c wrote %s", marker)
	}
	userClick(t, target)
	target.waitCount(t, "button_press", 1)
	if n := target.count(t, "key_press"); n != 0 {
		t.Errorf("the focused window received %d key presses from refused launches", n)
	}

	// The oracle can see typing: the same launch in an unrestricted session types.
	hu := startHost(t, host.Options{})
	u := session(t, hu, host.SessionSpec{Label: "unr", Mode: authz.Unrestricted})
	focus(t, target)
	res := call(t, u, "launch_app", map[string]any{"name": "xdotool", "additional_arguments": []string{"type", "--delay", "1", "ok"}, "timeout_ms": 5000})
	check(t, "unrestricted xdotool type", res, "")
	target.waitCount(t, "key_press", 2)

	// A declared desktop application launches: xwininfo sees its window, and /proc shows
	// exactly its Exec line.
	log := filepath.Join(dir, "declared.jsonl")
	argv := xevlogArgv(appA, "declared", log)
	id := declareApp(t, "declared", argv, "")
	res = call(t, s, "launch_app", map[string]any{"name": id})
	if !check(t, "declared app", res, "") {
		return
	}
	l := launchResult(t, res)
	if !l.Declared || l.DesktopID != id+".desktop" || len(l.WindowIDs) == 0 {
		t.Fatalf("launch_app = %+v, want a declared launch of %s with a window", l, id)
	}
	if got := cmdline(t, l.PID); !slices.Equal(got, argv) {
		t.Errorf("/proc/%d/cmdline = %q, want the Exec line %q", l.PID, got, argv)
	}
	if out, err := exec.Command("xwininfo", "-id", fmt.Sprint(l.WindowIDs[0])).CombinedOutput(); err != nil || !strings.Contains(string(out), `"declared"`) {
		t.Errorf("xwininfo -id %d: %v: %s", l.WindowIDs[0], err, out)
	}
	// By its Name as well; with arguments it does not take, it is refused.
	check(t, "declared app with an argument its entry does not take", call(t, s, "launch_app", map[string]any{"name": id, "additional_arguments": []string{"-title", "x"}}), authz.CodeInvalidArguments)

	// %f: an existing file is accepted and passed; an option or a missing file is not.
	file := filepath.Join(dir, "document.txt")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	flog := filepath.Join(dir, "viewer.jsonl")
	fargv := xevlogArgv(appA, "viewer", flog)
	fid := declareApp(t, "viewer", fargv, "%f")
	for _, bad := range []string{"--option", "-out=/tmp/x", file + ".missing", dir, "document.txt"} {
		check(t, "%f with "+bad, call(t, s, "launch_app", map[string]any{"name": fid, "additional_arguments": []string{bad}}), authz.CodeInvalidArguments)
	}
	check(t, "%f with two files", call(t, s, "launch_app", map[string]any{"name": fid, "urls": []string{file, file}}), authz.CodeInvalidArguments)
	res = call(t, s, "launch_app", map[string]any{"name": fid, "urls": []string{file}})
	if check(t, "%f with an existing file", res, "") {
		l := launchResult(t, res)
		if got, want := cmdline(t, l.PID), append(fargv, file); !slices.Equal(got, want) {
			t.Errorf("/proc/%d/cmdline = %q, want %q", l.PID, got, want)
		}
	}
}

// consentLog is a consent provider that grants only the command lines it was told to and
// records every request.
type consentLog struct {
	// mu guards the fields below.
	mu    sync.Mutex
	asked []host.ConsentRequest
	grant []string // substrings of descriptions to grant
}

func (c *consentLog) decide(_ context.Context, req host.ConsentRequest) host.ConsentDecision {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, req)
	for _, g := range c.grant {
		if strings.Contains(req.Description, g) {
			return host.ConsentDecision{Granted: true, TTL: time.Minute}
		}
	}
	return host.ConsentDecision{}
}

func (c *consentLog) requests() []host.ConsentRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]host.ConsentRequest(nil), c.asked...)
}

// TestLaunchConsentShowsTheCommand: with a consent provider, a launch that needs consent
// asks with the exact command line (shell-quoted, control characters escaped), and a
// grant covers exactly that argv: not another one, not a longer one.
func TestLaunchConsentShowsTheCommand(t *testing.T) {
	requireDesktop(t)
	progs := needPrograms(t, "sh")
	sh := progs["sh"]
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	c := &consentLog{grant: []string{fmt.Sprintf("the command line: %s -c 'echo one > %s' (tool", sh, one)}}
	h := startHost(t, host.Options{Consent: c.decide})
	s := session(t, h, host.SessionSpec{Label: "std"})
	launch := func(script string) host.Result {
		return call(t, s, "launch_app", map[string]any{"name": "sh", "additional_arguments": []string{"-c", script}, "timeout_ms": 5000})
	}

	check(t, "granted command", launch("echo one > "+one), "")
	asked := c.requests()
	if len(asked) != 1 {
		t.Fatalf("provider asked %d times, want 1", len(asked))
	}
	want := fmt.Sprintf("the command line: %s -c 'echo one > %s'", sh, one)
	if !strings.Contains(asked[0].Description, want) || asked[0].Operation != "launch" || asked[0].Tool != "launch_app" {
		t.Errorf("consent request = %+v, want a description containing %q", asked[0], want)
	}
	if b, _ := os.ReadFile(one); string(b) != "one\n" {
		t.Errorf("granted command wrote %q", b)
	}

	// Another argv is asked about again (and declined), and does not run.
	check(t, "another command", launch("echo two > "+two), authz.CodeAuthorizationDeclined)
	check(t, "the granted command with a trailing argument", call(t, s, "launch_app", map[string]any{"name": "sh", "additional_arguments": []string{"-c", "echo one > " + one, "x"}}), authz.CodeAuthorizationDeclined)
	if _, err := os.Stat(two); err == nil {
		t.Errorf("a declined command wrote %s", two)
	}
	if n := len(c.requests()); n != 3 {
		t.Errorf("provider asked %d times, want 3 (a grant covers one argv only)", n)
	}
	// The granted argv again: covered by its grant, no new question.
	check(t, "granted command again", launch("echo one > "+one), "")
	if n := len(c.requests()); n != 3 {
		t.Errorf("provider asked %d times, want still 3 (the grant is reused)", n)
	}
	// Control characters are escaped in the question; the grant does not match it.
	check(t, "command with an escape sequence", launch("echo \x1b[2J\nrm -rf /nonexistent"), authz.CodeAuthorizationDeclined)
	last := c.requests()[len(c.requests())-1]
	if strings.ContainsAny(last.Description, "\x1b\n") || !strings.Contains(last.Description, `$'echo \x1b[2J\nrm -rf /nonexistent'`) {
		t.Errorf("description %q does not escape the control characters", last.Description)
	}
}

// TestLaunchBoundedArguments: a bounded manifest's app takes no arguments unless its
// arguments rule lists patterns, each argument must match one of them entirely.
func TestLaunchBoundedArguments(t *testing.T) {
	requireDesktop(t)
	h := startHost(t, host.Options{})
	base := "version: 1\nexpires_after: 1h\nidle_timeout: 30m\nallow: {tools: [launch_app]}\nresources:\n  apps: [{executable: %s, launch: true%s}]\n"
	none := session(t, h, host.SessionSpec{Label: "none", Mode: authz.Bounded, Manifest: fmt.Appendf(nil, base, appA, "")})
	explicit := session(t, h, host.SessionSpec{Label: "explicit", Mode: authz.Bounded, Manifest: fmt.Appendf(nil, base, appA, ", arguments: none")})
	listed := session(t, h, host.SessionSpec{Label: "listed", Mode: authz.Bounded, Manifest: fmt.Appendf(nil, base, appA, ", arguments: ["+xevlogArgPatterns+"]")})

	dir := t.TempDir()
	argv := xevlogArgv(appA, "bounded-args", filepath.Join(dir, "a.jsonl"))
	id := declareApp(t, "bounded-args", argv, "")
	check(t, "no arguments rule, arguments", call(t, none, "launch_app", map[string]any{"name": id}), authz.CodeOutsideManifest)
	check(t, "arguments: none, arguments", call(t, explicit, "launch_app", map[string]any{"name": id}), authz.CodeOutsideManifest)
	check(t, "arguments: none, free arguments", call(t, explicit, "launch_app", map[string]any{"launch_path": appA, "additional_arguments": []string{"-title", "x"}}), authz.CodeOutsideManifest)
	res := call(t, listed, "launch_app", map[string]any{"name": id})
	if check(t, "arguments matching the patterns", res, "") {
		if got := cmdline(t, launchResult(t, res).PID); !slices.Equal(got, argv) {
			t.Errorf("cmdline = %q, want %q", got, argv)
		}
	}
	check(t, "an argument matching no pattern", call(t, listed, "launch_app", map[string]any{"launch_path": appA, "additional_arguments": []string{"-title", "Has Space"}}), authz.CodeOutsideManifest)
	check(t, "an argument matching only part of a pattern", call(t, listed, "launch_app", map[string]any{"launch_path": appA, "additional_arguments": []string{"-out", "/tmp/x.jsonl;id"}}), authz.CodeOutsideManifest)
	// Without arguments the app launches under every rule.
	res = call(t, none, "launch_app", map[string]any{"launch_path": appA, "timeout_ms": 0})
	if check(t, "no arguments rule, no arguments", res, "") {
		syscall.Kill(launchResult(t, res).PID, syscall.SIGKILL)
	}
}

// TestLaunchSharedDisplayUntrusted: on a display shared with a person (Private false),
// programs the session launches are untrusted X clients: xdotool cannot type into the
// person's (trusted) window, xwd cannot read its image. On the session's private display
// the same launches are trusted. The session still acts on what it launched.
func TestLaunchSharedDisplayUntrusted(t *testing.T) {
	requireDesktop(t)
	needPrograms(t, "xdotool", "xwd")
	target := startApp(t, appB, "person-window")
	place(t, target, 330, 460)
	grantAll := func(context.Context, host.ConsentRequest) host.ConsentDecision {
		return host.ConsentDecision{Granted: true, TTL: time.Minute}
	}
	shared := session(t, startHostOn(t, host.Options{Consent: grantAll}, false), host.SessionSpec{Label: "shared"})
	private := session(t, startHostOn(t, host.Options{Consent: grantAll}, true), host.SessionSpec{Label: "private"})
	xwd := map[string]any{"name": "xwd", "additional_arguments": []string{"-silent", "-id", fmt.Sprint(target.Window), "-out", "/dev/null"}, "timeout_ms": 10000}
	typeArgs := map[string]any{"name": "xdotool", "additional_arguments": []string{"type", "--delay", "1", "pwned"}, "timeout_ms": 10000}

	focus(t, target)
	res := call(t, shared, "launch_app", typeArgs)
	if check(t, "xdotool type on a shared display", res, "") {
		l := launchResult(t, res)
		if !l.Untrusted || !l.Exited || l.ExitCode == nil || *l.ExitCode == 0 {
			t.Errorf("launch_app = %+v, want an untrusted client that exited with a failure", l)
		}
		if len(l.Warnings) == 0 || !strings.Contains(l.Warnings[0], "XTEST") {
			t.Errorf("launch_app warnings = %q, want the measured XTEST limit", l.Warnings)
		}
	}
	userClick(t, target)
	target.waitCount(t, "button_press", 1)
	if n := target.count(t, "key_press"); n != 0 {
		t.Errorf("an untrusted client typed %d keys into the person's window", n)
	}
	res = call(t, shared, "launch_app", xwd)
	if check(t, "xwd on a shared display", res, "") {
		if l := launchResult(t, res); l.ExitCode == nil || *l.ExitCode == 0 {
			t.Errorf("untrusted xwd of a trusted window = %+v, want a failure", l)
		}
	}

	// The oracles work: on the private display the same programs are trusted.
	res = call(t, private, "launch_app", xwd)
	if check(t, "xwd on a private display", res, "") {
		if l := launchResult(t, res); l.Untrusted || l.ExitCode == nil || *l.ExitCode != 0 || len(l.Warnings) != 0 {
			t.Errorf("trusted xwd = %+v, want exit 0 and no warnings", l)
		}
	}
	focus(t, target)
	check(t, "xdotool type on a private display", call(t, private, "launch_app", typeArgs), "")
	target.waitCount(t, "key_press", 2)

	// What the session launched on the shared display works and is the session's own.
	own := launchApp(t, shared, appA, "untrusted-own")
	place(t, own, 660, 460)
	check(t, "click the session's untrusted app", call(t, shared, "click", map[string]any{"pid": own.PID, "window_id": own.Window, "x": 10, "y": 10}), "")
	own.waitCount(t, "button_press", 1)
}

// orphanHostEnv makes the test binary an embedding host that launches one app and waits
// to be killed (see orphanHost).
const orphanHostEnv = "CUA_AUTHZ_ORPHAN_HOST"

// orphanHost runs a host on the display of DISPLAY/XAUTHORITY, launches the desktop
// entry named by $CUA_AUTHZ_ORPHAN_HOST in a standard session, prints "pid=P worker=W"
// and blocks until it is killed.
func orphanHost() int {
	env := []string{"DISPLAY=" + os.Getenv("DISPLAY"), "XAUTHORITY=" + os.Getenv("XAUTHORITY"),
		"XDG_DATA_HOME=" + os.Getenv("XDG_DATA_HOME"), "XDG_DATA_DIRS=" + os.Getenv("XDG_DATA_DIRS")}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := host.Start(ctx, host.Options{Env: env, Display: host.DisplayFacts{Name: os.Getenv("DISPLAY"), Private: true},
		Ceiling: authz.Ceiling{AllowedModes: []authz.Mode{authz.Standard}, MaxSessionTTL: time.Hour, MaxIdleTTL: time.Hour}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s, err := h.CreateSession(ctx, host.SessionSpec{Label: "orphan"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	res, err := s.Call(ctx, "launch_app", json.RawMessage(fmt.Sprintf(`{"name":%q}`, os.Getenv(orphanHostEnv))))
	if err != nil || res.Outcome != host.Completed || res.IsError {
		fmt.Fprintln(os.Stderr, "launch_app:", err, res.Text())
		return 1
	}
	var out struct {
		PID int `json:"pid"`
	}
	json.Unmarshal(res.Structured, &out)
	fmt.Printf("pid=%d worker=%d\n", out.PID, h.PID())
	select {}
}

// TestLaunchedAppsDieWithKilledHost: when the host is SIGKILLed, the worker dies (its
// Pdeathsig) and so does every app it launched (theirs): none survives as an orphan.
func TestLaunchedAppsDieWithKilledHost(t *testing.T) {
	requireDesktop(t)
	log := filepath.Join(t.TempDir(), "orphan.jsonl")
	id := declareApp(t, "orphan", xevlogArgv(appA, "orphan", log), "")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), orphanHostEnv+"="+id)
	cmd.Env = append(cmd.Env, xdgEnv()...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("host child: %v", err)
	}
	t.Logf("host child: %s", line)
	var pid, workerPID int
	if _, err := fmt.Sscanf(line, "pid=%d worker=%d", &pid, &workerPID); err != nil {
		t.Fatalf("host child said %q: %v", line, err)
	}
	if !processAlive(pid) || !processAlive(workerPID) {
		t.Fatalf("launched app %d or worker %d is not running before the kill", pid, workerPID)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL); syscall.Kill(workerPID, syscall.SIGKILL) })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed := time.Now()
	if !waitExit(t, workerPID, time.Second) {
		t.Errorf("worker %d survives its SIGKILLed host", workerPID)
	}
	if !waitExit(t, pid, time.Second) {
		t.Errorf("launched app %d survives its SIGKILLed host after %v", pid, time.Since(killed))
	}
}
