package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/client"
	"github.com/cua-host/cua-host/proto/contract"
	"github.com/cua-host/cua-host/proto/wire"
)

// shProxy starts /bin/sh as a stand-in proxy running script, with fd 3 and 4 as a real
// proxy gets them.
func shProxy(t *testing.T, script string, grace time.Duration) (*Proxy, *os.File) {
	t.Helper()
	mine, theirs, err := wire.SessionPair()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mine.Close() })
	p, err := StartProxy(ProxyOptions{Logger: testLogger(t), Path: "/bin/sh", Args: []string{"-c", script}, Session: theirs, CloseGrace: grace})
	if err != nil {
		t.Fatalf("StartProxy: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p, mine
}

func TestStartProxy(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	t.Setenv("DISPLAY", ":99")
	t.Setenv("CUA_HOST_HTTP_TOKEN", "must-not-reach-the-child-through-the-environment")
	before := countFDs(t)
	script := `test -S /proc/self/fd/3 || exit 3
test -p /proc/self/fd/4 || exit 4
IFS= read -r line <&4 || exit 5
{ printf '%s\n' "$line"; env; } > ` + out + `
cat <&4 >/dev/null
exit 0`
	p, mine := shProxy(t, script, time.Second)
	if err := p.Activate(contract.Bootstrap{Generation: make([]byte, 16), Version: 1, HTTPToken: strings.Repeat("t", 40)}); err != nil {
		t.Fatalf("Activate: %v", err)
	}
	if err := p.Activate(contract.Bootstrap{Generation: make([]byte, 16), Version: 1}); err == nil {
		t.Errorf("second Activate: no error")
	}
	var got []byte
	if !waitUntil(5*time.Second, func() bool { got, _ = os.ReadFile(out); return len(got) > 0 }) {
		t.Fatalf("the proxy wrote nothing")
	}
	select {
	case <-p.Exited():
		t.Fatalf("the proxy exited before it was released (code %d)", p.ExitCode())
	case <-time.After(50 * time.Millisecond):
	}
	p.Close()
	if code := p.ExitCode(); code != 0 {
		t.Errorf("exit code after release = %d, want 0", code)
	}
	lines := strings.Split(string(got), "\n")
	want := contract.BootstrapPrefix + " generation=00000000000000000000000000000000 version=1 http-token=" + strings.Repeat("t", 40)
	if lines[0] != want {
		t.Errorf("bootstrap line = %q, want %q", lines[0], want)
	}
	for _, l := range lines[1:] {
		k, _, _ := strings.Cut(l, "=")
		switch k {
		case "DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", "CUA_HOST_HTTP_TOKEN":
			t.Errorf("the proxy's environment has %s", l)
		}
	}
	mine.Close()
	if after := countFDs(t); after != before {
		t.Errorf("descriptors: %d before, %d after; the host kept a copy of something", before, after)
	}
}

func TestProxyCloseKillsStubbornProxy(t *testing.T) {
	p, _ := shProxy(t, `trap '' TERM HUP; exec sleep 30`, 100*time.Millisecond)
	start := time.Now()
	p.Close()
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("Close took %v", el)
	}
	if code := p.ExitCode(); code != -1 {
		t.Errorf("exit code = %d, want -1 (killed)", code)
	}
	p.Close() // idempotent
	if err := p.Activate(contract.Bootstrap{Generation: make([]byte, 16), Version: 1}); err == nil {
		t.Errorf("Activate after Close: no error")
	}
}

func TestProxyUnactivatedExitsOnRelease(t *testing.T) {
	p, _ := shProxy(t, `IFS= read -r line <&4 && exit 9; exit 0`, time.Second)
	p.Close()
	if code := p.ExitCode(); code != 0 {
		t.Errorf("exit code = %d, want 0 (end-of-file before any bootstrap)", code)
	}
}

func TestCreateSessionOn(t *testing.T) {
	h := startHost(t, Options{})
	mine, theirs, err := wire.SessionPair()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	info, err := h.CreateSessionOn(ctx, SessionSpec{Label: "bound"}, theirs)
	if err != nil {
		t.Fatalf("CreateSessionOn: %v", err)
	}
	if info.Label != "bound" || info.ExpiresAt.Before(time.Now()) {
		t.Errorf("SessionInfo = %+v", info)
	}
	conn, err := client.New(mine, client.Options{Generation: h.GenerationBytes(), Version: h.ProtocolVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	res, err := conn.Call(ctx, "noop", nil)
	if err != nil || res.Outcome != Completed || res.IsError {
		t.Errorf("noop on a session bound with CreateSessionOn = %+v, %v", res, err)
	}
	// A duplicate label is refused, and the descriptor is still released.
	mine2, theirs2, err := wire.SessionPair()
	if err != nil {
		t.Fatal(err)
	}
	defer mine2.Close()
	if _, err := h.CreateSessionOn(ctx, SessionSpec{Label: "bound"}, theirs2); err == nil {
		t.Errorf("CreateSessionOn with a duplicate label: no error")
	}
}

func waitUntil(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}
