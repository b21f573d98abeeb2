package display

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// plainXvfb starts Xvfb with the extra arguments (none: no access control at all) and
// returns its display name; it is killed when the test ends.
func plainXvfb(t *testing.T, extra ...string) string {
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

// TestProbeAccess: a server with a cookie admits nobody without it; a server started
// without one has no access control; `xhost +si:localuser:USER` admits the user without a
// cookie, and the probe names the entry. The oracle is xhost, a separate X client.
func TestProbeAccess(t *testing.T) {
	requirePrograms(t, "Xvfb", "xhost")

	open := plainXvfb(t)
	a, err := ProbeAccess(t.Context(), open)
	if err != nil || !a.NoCookie || a.ControlDisabled || len(a.Hosts) != 0 {
		t.Errorf("ProbeAccess(%s, no -auth) = %#v, %v; want admitted with no entry and no cookie configured", open, a, err)
	}

	xauth := t.TempDir() + "/Xauthority"
	cookie, err := newCookie()
	if err != nil {
		t.Fatal(err)
	}
	if err := writeXauthority(xauth, cookie, -1); err != nil {
		t.Fatal(err)
	}
	guarded := plainXvfb(t, "-auth", xauth)
	if err := writeXauthority(xauth, cookie, displayNum(t, guarded)); err != nil {
		t.Fatal(err)
	}
	a, err = ProbeAccess(t.Context(), guarded)
	if err != nil || a.NoCookie {
		t.Errorf("ProbeAccess(%s, -auth) = %#v, %v; want a cookie needed", guarded, a, err)
	}

	user := os.Getenv("USER")
	if user == "" {
		user = "root"
		if os.Getuid() != 0 {
			t.Skip("USER is unset")
		}
	}
	xhost := exec.Command("xhost", "+si:localuser:"+user)
	xhost.Env = []string{"DISPLAY=" + guarded, "XAUTHORITY=" + xauth}
	if out, err := xhost.CombinedOutput(); err != nil {
		t.Fatalf("xhost: %v: %s", err, out)
	}
	a, err = ProbeAccess(t.Context(), guarded)
	if err != nil || !a.NoCookie || a.ControlDisabled || !slices.Contains(a.Hosts, "si:localuser:"+user) {
		t.Errorf("ProbeAccess(%s, +si:localuser:%s) = %#v, %v; want admitted by that entry", guarded, user, a, err)
	}
	if s := a.String(); !strings.Contains(s, "si:localuser:"+user) {
		t.Errorf("Access.String() = %q, want the entry named", s)
	}
	xhost = exec.Command("xhost", "+")
	xhost.Env = []string{"DISPLAY=" + guarded, "XAUTHORITY=" + xauth}
	if out, err := xhost.CombinedOutput(); err != nil {
		t.Fatalf("xhost: %v: %s", err, out)
	}
	if a, err = ProbeAccess(t.Context(), guarded); err != nil || !a.NoCookie || !a.ControlDisabled {
		t.Errorf("ProbeAccess(%s, xhost +) = %#v, %v; want access control off", guarded, a, err)
	}
}

func displayNum(t *testing.T, name string) int {
	t.Helper()
	n, err := localDisplayNumber(name)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestParseHostsRejectsTruncation(t *testing.T) {
	rep := make([]byte, 32)
	rep[0], rep[1], rep[8] = 1, 1, 1 // one host announced, none present
	if _, _, err := parseHosts(rep); err == nil {
		t.Error("parseHosts accepted a reply without the host it announced")
	}
	rep = append(rep, 5, 0, 200, 0) // an address longer than the reply
	if _, _, err := parseHosts(rep); err == nil {
		t.Error("parseHosts accepted a truncated address")
	}
	if _, _, err := parseHosts(rep[:10]); err == nil {
		t.Error("parseHosts accepted a short reply")
	}
}

// FuzzParseHosts: any reply decodes to hosts or an error, never a panic.
func FuzzParseHosts(f *testing.F) {
	ok := make([]byte, 32, 48)
	ok[1], ok[8] = 1, 1
	ok = append(ok, 5, 0, 14, 0)
	ok = append(ok, []byte("localuser\x00bob\x00\x00")...)
	f.Add(ok)
	f.Add(make([]byte, 32))
	f.Fuzz(func(t *testing.T, rep []byte) {
		_, hosts, err := parseHosts(rep)
		if err == nil && len(rep) < 32 {
			t.Fatalf("parseHosts(%d bytes) = %v, nil", len(rep), hosts)
		}
	})
}
