package doctor

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.CheckLeaks(m.Run())) }

// xvfb starts Xvfb with extra arguments on a free display and returns its name; it is
// killed when the test ends.
func xvfb(t *testing.T, extra ...string) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-displayfd", "3", "-screen", "0", "320x200x24", "-nolisten", "tcp", "-noreset"}, extra...)
	cmd := exec.Command("Xvfb", args...)
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		r.Close()
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case n := <-line:
		if n == "" {
			t.Fatal("Xvfb printed no display number")
		}
		return ":" + n
	case <-time.After(10 * time.Second):
		t.Fatal("Xvfb did not start")
		return ""
	}
}

// cookieFile writes an Xauthority file with one MIT-MAGIC-COOKIE-1 for any display of
// any host (FamilyWild), as a server's -auth file and as a client's.
func cookieFile(t *testing.T) string {
	t.Helper()
	cookie := make([]byte, 16)
	if _, err := rand.Read(cookie); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	_ = binary.Write(&b, binary.BigEndian, uint16(0xffff))
	for _, f := range [][]byte{nil, nil, []byte("MIT-MAGIC-COOKIE-1"), cookie} {
		_ = binary.Write(&b, binary.BigEndian, uint16(len(f)))
		b.Write(f)
	}
	path := filepath.Join(t.TempDir(), "Xauthority")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// env is an environment for Run: only the variables given, PATH from this process.
func env(kv ...string) func(string) string {
	m := map[string]string{"PATH": os.Getenv("PATH")}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func mustCheck(t *testing.T, r Report, id string) Check {
	t.Helper()
	c, ok := r.Check(id)
	if !ok {
		t.Fatalf("report has no %s check: %+v", id, r.Checks)
	}
	return c
}

// checkReady holds Ready and Missing to the checks: ready exactly when no required check
// is missing, and Missing lists those.
func checkReady(t *testing.T, r Report) {
	t.Helper()
	var missing []string
	for _, c := range r.Checks {
		if c.Required && c.Status == Missing {
			missing = append(missing, c.ID)
		}
	}
	if !slices.Equal(r.Missing, missing) || r.Ready != (len(missing) == 0) {
		t.Errorf("Ready = %v, Missing = %v; the required missing checks are %v", r.Ready, r.Missing, missing)
	}
}

// TestRunSharedDisplay drives Run against real Xvfb servers: one that needs a cookie,
// checked with the Xauthority file holding it and without; one started without -auth,
// which admits every local client; and a display number nobody serves.
func TestRunSharedDisplay(t *testing.T) {
	testkit.NeedPrograms(t, "Xvfb")
	xauth := cookieFile(t)
	guarded := xvfb(t, "-auth", xauth)
	home := t.TempDir() // no ~/.Xauthority

	t.Run("with the cookie", func(t *testing.T) {
		r := Run(t.Context(), Options{Getenv: env("DISPLAY", guarded, "XAUTHORITY", xauth, "HOME", home)})
		checkReady(t, r)
		if r.Display != guarded || r.DisplaySource != "$DISPLAY" || !r.Shared {
			t.Errorf("Run(DISPLAY=%s) display = %q from %q shared %v", guarded, r.Display, r.DisplaySource, r.Shared)
		}
		if c := mustCheck(t, r, "x_server"); c.Status != OK || !strings.Contains(c.Found, "cookie from "+xauth) {
			t.Errorf("x_server = %+v, want ok with the cookie from %s", c, xauth)
		}
		for _, id := range []string{"ext_xtest", "ext_xinput", "ext_x_resource", "ext_security", "ext_mit_shm", "ext_xkeyboard", "ext_randr"} {
			if c := mustCheck(t, r, id); c.Status != OK {
				t.Errorf("%s = %+v on Xvfb, want ok", id, c)
			}
		}
		if c := mustCheck(t, r, "display_access"); c.Status != OK {
			t.Errorf("display_access = %+v on a server started with -auth, want ok (cookie needed)", c)
		}
		if c := mustCheck(t, r, "input_devices"); c.Status != Warn || !strings.Contains(c.Found, "xtest_only") {
			t.Errorf("input_devices = %+v on Xvfb, want warn: xtest only", c)
		}
		if c := mustCheck(t, r, "window_manager"); c.Status != Warn || c.Required {
			t.Errorf("window_manager = %+v on a bare Xvfb, want a warning that stops nothing", c)
		}
		if c := mustCheck(t, r, "atspi_bus"); c.Status != Warn || !strings.Contains(c.Found, "no session bus") {
			t.Errorf("atspi_bus = %+v without DBUS_SESSION_BUS_ADDRESS, want warn", c)
		}
		if c := mustCheck(t, r, "sandbox"); !r.Ready && !slices.Equal(r.Missing, []string{"sandbox"}) || c.Status != OK && r.Ready {
			t.Errorf("Ready %v Missing %v with sandbox %+v; the sandbox is the only required check that may be missing here", r.Ready, r.Missing, c)
		}
		if _, ok := r.Check("private_display"); ok {
			t.Error("a shared display's report has a private_display check")
		}
	})

	t.Run("without the cookie", func(t *testing.T) {
		r := Run(t.Context(), Options{Getenv: env("DISPLAY", guarded, "HOME", home)})
		checkReady(t, r)
		c := mustCheck(t, r, "x_server")
		if c.Status != Missing || !c.Required || !strings.Contains(c.Found, "no cookie was sent") || !strings.Contains(c.Meaning, "XAUTHORITY") {
			t.Errorf("x_server without a cookie = %+v, want missing, saying no cookie was sent and to set XAUTHORITY", c)
		}
		if r.Ready || !slices.Contains(r.Missing, "x_server") {
			t.Errorf("Ready %v Missing %v, want not ready with x_server missing", r.Ready, r.Missing)
		}
		if _, ok := r.Check("ext_xtest"); ok {
			t.Error("the extensions of a display that could not be opened were reported")
		}
		if c := mustCheck(t, r, "display_access"); c.Status != OK {
			t.Errorf("display_access = %+v, want ok: the server needs a cookie", c)
		}
	})

	t.Run("no access control", func(t *testing.T) {
		open := xvfb(t)
		r := Run(t.Context(), Options{Display: open, Getenv: env("HOME", home)})
		checkReady(t, r)
		if r.Display != open || r.DisplaySource != "--display" {
			t.Errorf("Run(--display %s) display = %q from %q", open, r.Display, r.DisplaySource)
		}
		if c := mustCheck(t, r, "x_server"); c.Status != OK || !strings.Contains(c.Found, "without a cookie") {
			t.Errorf("x_server = %+v, want ok without a cookie", c)
		}
		if c := mustCheck(t, r, "display_access"); c.Status != Warn || !strings.Contains(c.Meaning, "trusted client") {
			t.Errorf("display_access = %+v on a server without -auth, want a warning that launched programs get in", c)
		}
	})

	t.Run("no server", func(t *testing.T) {
		r := Run(t.Context(), Options{Display: ":65042", Getenv: env("HOME", home)})
		checkReady(t, r)
		if c := mustCheck(t, r, "x_server"); c.Status != Missing || !strings.Contains(c.Found, "cannot be opened") {
			t.Errorf("x_server on :65042 = %+v, want missing: cannot be opened", c)
		}
		if r.Ready {
			t.Error("Ready with no X server")
		}
	})
}

// TestRunPrivateDisplay: without $DISPLAY, Run starts the private display run would start
// and reports what it offers, openbox and its session bus's accessibility bus included;
// with the programs out of reach it says which are missing and what to install.
func TestRunPrivateDisplay(t *testing.T) {
	testkit.NeedPrograms(t, "Xvfb", "openbox", "dbus-daemon")
	r := Run(t.Context(), Options{Getenv: env("HOME", t.TempDir())})
	checkReady(t, r)
	if r.Display != "private" || r.DisplaySource != "no $DISPLAY" || r.Shared {
		t.Errorf("Run(no DISPLAY) display = %q from %q shared %v, want a private one", r.Display, r.DisplaySource, r.Shared)
	}
	if c := mustCheck(t, r, "private_display"); c.Status != OK {
		t.Fatalf("private_display = %+v, want started", c)
	}
	if c := mustCheck(t, r, "window_manager"); c.Status != OK || !strings.Contains(c.Found, "Openbox") {
		t.Errorf("window_manager = %+v, want Openbox", c)
	}
	if c := mustCheck(t, r, "ext_security"); c.Required {
		t.Errorf("ext_security = %+v: a private display does not need it", c)
	}
	_, serviceErr := os.Stat("/usr/share/dbus-1/services/org.a11y.Bus.service")
	if c := mustCheck(t, r, "atspi_bus"); (c.Status == OK) != (serviceErr == nil) {
		t.Errorf("atspi_bus = %+v with at-spi2-core's service file present: %v", c, serviceErr == nil)
	}
	for _, id := range []string{"display_access", "input_devices", "xvfb"} {
		if _, ok := r.Check(id); ok {
			t.Errorf("a private display's report has a %s check", id)
		}
	}

	r = Run(t.Context(), Options{Display: "private", Getenv: env("PATH", t.TempDir())})
	checkReady(t, r)
	c := mustCheck(t, r, "private_display")
	if c.Status != Missing || r.Ready || !slices.Equal(c.Install, []string{"xvfb", "openbox", "dbus"}) {
		t.Errorf("private_display with an empty PATH = %+v (ready %v), want missing with xvfb openbox dbus to install", c, r.Ready)
	}
}

// TestReportJSON: the JSON keys scripts read, and statuses as words.
func TestReportJSON(t *testing.T) {
	r := Report{Display: ":0", DisplaySource: "$DISPLAY", Shared: true, Missing: []string{"sandbox"},
		Checks: []Check{{ID: "sandbox", Title: "sandbox (bubblewrap)", Status: Missing, Required: true, Found: "bwrap is not installed", Install: []string{"bubblewrap"}}}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"display":":0","display_source":"$DISPLAY","shared":true,"ready":false,"missing":["sandbox"],"checks":[{"id":"sandbox","title":"sandbox (bubblewrap)","status":"missing","required":true,"found":"bwrap is not installed","install":["bubblewrap"]}]}`
	if string(b) != want {
		t.Errorf("json.Marshal(report) = %s\nwant %s", b, want)
	}
	if _, err := json.Marshal(Check{}); err == nil {
		t.Error("a check without a status marshalled")
	}
}
