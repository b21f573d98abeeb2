// Package authze2e tests the authorization model end to end: a real host, a real worker process
// (this test binary re-executed) with the desktop tools and the test-only tools, on a
// private Xvfb display with openbox. The input oracle is xevlog (every event a window
// received); the side-effect oracle is the marker tool.
//
// When Xvfb, openbox or xdotool is missing the tests skip, unless CI is set: then they fail.
package authze2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/host/display"
	"github.com/cua-host/cua-host/proto/contract"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/test/testkit"
	"github.com/cua-host/cua-host/test/testworker"
	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/worker"
	"github.com/cua-host/cua-host/worker/tool"
)

// programs are what these tests need on PATH.
var programs = []string{"Xvfb", "openbox", "xdotool"}

var (
	skipReason string
	disp       *display.Display
	// appA is the xevlog binary sessions launch (listed in bounded manifests); appB is a
	// copy at another path, for windows no manifest lists.
	appA, appB string
	// xdgDir is the XDG data directory (XDG_DATA_HOME and first of XDG_DATA_DIRS) of
	// every host's worker: launchApp declares the apps it launches there, as desktop
	// entries, the way an installed application is declared.
	xdgDir string
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == contract.WorkerSubcommand {
		os.Exit(worker.Main(os.Args[2:], worker.Config{NewRegistry: newRegistry, ExtraInventory: testworker.Inventory()}))
	}
	if os.Getenv(orphanHostEnv) != "" {
		os.Exit(orphanHost())
	}
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0") // race-built workers otherwise linger at exit
	}
	code := run(m)
	if err := goleak.Find(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "goleak:", err)
		code = 1
	}
	os.Exit(code)
}

// newRegistry is the shipped desktop registry plus the test-only tools (marker, noop…).
func newRegistry(ctx context.Context, hello *cuav1.Hello, log *slog.Logger) (*tool.Registry, io.Closer, error) {
	reg, closer, err := worker.DesktopRegistry(ctx, hello, log)
	if err != nil {
		return nil, nil, err
	}
	testworker.Register(reg)
	return reg, closer, nil
}

func run(m *testing.M) int {
	if skipReason = testkit.Missing(programs...); skipReason != "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "cua-authz-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	xdgDir = filepath.Join(dir, "xdg")
	if err := os.MkdirAll(filepath.Join(xdgDir, "applications"), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	appA = filepath.Join(dir, "app-a", "xevlog")
	appB = filepath.Join(dir, "app-b", "xevlog")
	for _, p := range []string{appA, appB} {
		if err := harness.BuildXevlog(p); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if disp, err = harness.StartDisplay(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer disp.Close()
	return m.Run()
}

// requireDesktop skips (or, with CI set, fails) when the display could not be set up.
func requireDesktop(t testing.TB) {
	t.Helper()
	testkit.Require(t, skipReason)
}

// xdgEnv is the worker's XDG data directories: the tests' own, then the system's.
func xdgEnv() []string {
	return []string{"XDG_DATA_HOME=" + xdgDir, "XDG_DATA_DIRS=" + xdgDir + ":/usr/local/share:/usr/share"}
}

// startHost starts a host whose worker is this binary, on the private display.
func startHost(t testing.TB, opts host.Options) *host.Host {
	t.Helper()
	return startHostOn(t, opts, true)
}

// startHostOn starts a host whose worker is this binary on the test display, telling the
// worker the display is private (the host's own: the host names the display's processes as
// protected) or shared with a person (a display the host did not start: it names none of
// them, so whatever the worker protects there it found on its own).
func startHostOn(t testing.TB, opts host.Options, private bool) *host.Host {
	t.Helper()
	requireDesktop(t)
	opts.Env = append(append(opts.Env, disp.Env()...), xdgEnv()...)
	opts.Display = host.DisplayFacts{Name: disp.Name(), Private: private, XAuthority: disp.XAuthority()}
	if private {
		opts.Display.ServerPID = disp.ServerPID()
		opts.ProtectedPIDs = append(opts.ProtectedPIDs, disp.PIDs()...)
	}
	if opts.Ceiling.AllowedModes == nil {
		opts.Ceiling = authz.Ceiling{AllowedModes: []authz.Mode{authz.Standard, authz.Bounded, authz.Unrestricted},
			UnrestrictedAcknowledged: true, MaxSessionTTL: time.Hour, MaxIdleTTL: time.Hour}
	}
	if os.Getenv("CUA_TEST_VERBOSE") != "" {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		opts.WorkerLogLevel = slog.LevelDebug
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := host.Start(ctx, opts)
	if err != nil {
		t.Fatalf("host.Start: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func session(t testing.TB, h *host.Host, spec host.SessionSpec) *host.Session {
	t.Helper()
	s, err := h.CreateSession(context.Background(), spec)
	if err != nil {
		t.Fatalf("CreateSession(%s): %v", spec.Label, err)
	}
	return s
}

func jsonArgs(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func call(t testing.TB, s *host.Session, name string, args any) host.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.Call(ctx, name, jsonArgs(args))
	if err != nil {
		t.Fatalf("Call(%s): %v", name, err)
	}
	return res
}

// check asserts a result: code "" means completed without error; otherwise NOT_STARTED
// with that refusal code.
func check(t testing.TB, what string, res host.Result, code authz.Code) bool {
	t.Helper()
	if code == "" {
		if res.Outcome != host.Completed || res.IsError || res.Refusal != nil {
			t.Errorf("%s = %s %s, want completed", what, res.Outcome, res.Text())
			return false
		}
		return true
	}
	if res.Outcome != host.NotStarted || res.Refusal == nil || res.Refusal.Code != string(code) {
		t.Errorf("%s = %s %s, want NOT_STARTED %s", what, res.Outcome, res.Text(), code)
		return false
	}
	return true
}

// app is an xevlog window and the file its events go to.
type app struct {
	PID    int
	Window uint32
	log    string
}

// event is one xevlog line.
type event struct {
	Type   string `json:"type"`
	Window uint32 `json:"window"`
	Button int    `json:"button"`
	X      int    `json:"x"`
	Y      int    `json:"y"`
	PID    int    `json:"pid"`
}

func (a *app) events(t testing.TB) []event {
	t.Helper()
	f, err := os.Open(a.log)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// count returns how many events of type typ the window logged.
func (a *app) count(t testing.TB, typ string) int {
	n := 0
	for _, e := range a.events(t) {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// waitCount waits until the window logged at least n events of type typ.
func (a *app) waitCount(t testing.TB, typ string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for a.count(t, typ) < n {
		if time.Now().After(deadline) {
			for _, e := range a.events(t) { // what did arrive, for the failure's reader
				if e.Type != "motion" {
					t.Logf("window 0x%x logged %+v", a.Window, e)
				}
			}
			t.Fatalf("window 0x%x logged %d %s events, want %d", a.Window, a.count(t, typ), typ, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startApp runs xevlog from exe as the user would (a child of the test, not of any
// session) and waits for its window.
func startApp(t testing.TB, exe, title string) *app {
	t.Helper()
	requireDesktop(t)
	a := &app{log: filepath.Join(t.TempDir(), title+".jsonl")}
	cmd := exec.Command(exe, "-title", title, "-width", "300", "-height", "200", "-out", a.log)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	a.PID = cmd.Process.Pid
	a.waitReady(t)
	return a
}

func (a *app) waitReady(t testing.TB) {
	t.Helper()
	// Generous: on a loaded CI machine (the end-to-end package runs browsers beside this
	// one) a new X client has been seen to need more than ten seconds.
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, e := range a.events(t) {
			if e.Type == "ready" {
				a.Window = e.Window
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("xevlog %s never became ready", a.log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// declareApp writes the desktop entry cua-ID.desktop whose Exec line is argv (each
// argument quoted), plus extra (field codes, unquoted), into the workers' XDG data
// directory, and returns its desktop id without the suffix.
func declareApp(t testing.TB, id string, argv []string, extra string) string {
	t.Helper()
	var exec []string
	for _, a := range argv {
		if strings.ContainsAny(a, "\"`$\\%\n") {
			t.Fatalf("declareApp: argument %q needs escaping this helper does not do", a)
		}
		exec = append(exec, `"`+a+`"`)
	}
	if extra != "" {
		exec = append(exec, extra)
	}
	id = "cua-" + id
	src := fmt.Sprintf("[Desktop Entry]\nType=Application\nName=%s\nExec=%s\n", id, strings.Join(exec, " "))
	if err := os.WriteFile(filepath.Join(xdgDir, "applications", id+".desktop"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return id
}

// xevlogArgv is the command line of an xevlog window titled title logging to log.
func xevlogArgv(exe, title, log string) []string {
	return []string{exe, "-title", title, "-width", "300", "-height", "200", "-out", log}
}

// launchApp has session s launch xevlog (exe) through launch_app; the window is its own.
// The app is declared as a desktop entry and launched by its desktop id, the way a
// standard session launches an installed application without consent.
func launchApp(t testing.TB, s *host.Session, exe, title string) *app {
	t.Helper()
	log := filepath.Join(t.TempDir(), title+".jsonl")
	return launchDeclared(t, s, title, log, xevlogArgv(exe, title, log), nil)
}

// launchDeclared declares argv as the desktop application cua-TITLE and has session s
// launch it by its desktop id (with the further launch_app arguments extra), then waits for
// the window of the oracle client (xevlog or xclient) that logs to log.
func launchDeclared(t testing.TB, s *host.Session, title, log string, argv []string, extra map[string]any) *app {
	t.Helper()
	a := &app{log: log}
	args := map[string]any{"name": declareApp(t, title, argv, "")}
	for k, v := range extra {
		args[k] = v
	}
	res := call(t, s, "launch_app", args)
	if !check(t, "launch_app "+title, res, "") {
		t.FailNow()
	}
	var out struct {
		PID int `json:"pid"`
	}
	json.Unmarshal(res.Structured, &out)
	a.PID = out.PID
	a.waitReady(t)
	return a
}

// xdoMu serializes the oracle's own input.
var xdoMu sync.Mutex

// place moves a window (as the user would) so windows never overlap.
func place(t testing.TB, a *app, x, y int) {
	t.Helper()
	xdoMu.Lock()
	defer xdoMu.Unlock()
	out, err := exec.Command("xdotool", "windowmove", "--sync", fmt.Sprint(a.Window), fmt.Sprint(x), fmt.Sprint(y)).CombinedOutput()
	if err != nil {
		t.Fatalf("xdotool windowmove: %v: %s", err, out)
	}
}

// userClick clicks in a window through xdotool: the oracle's barrier, independent of the
// worker. When it shows up in the log, everything sent before it has been delivered.
func userClick(t testing.TB, a *app) {
	t.Helper()
	xdoMu.Lock()
	defer xdoMu.Unlock()
	out, err := exec.Command("xdotool", "mousemove", "--window", fmt.Sprint(a.Window), "150", "100", "click", "1").CombinedOutput()
	if err != nil {
		t.Fatalf("xdotool click: %v: %s", err, out)
	}
}
