package e2e

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestTeardown: however the session ends — the agent closes stdin, the proxy is killed, or
// the host is killed — no process of ours is left: not the worker, the proxy, Xvfb,
// openbox, dbus-daemon, nor the terminal the session launched (or its shell).
func TestTeardown(t *testing.T) {
	needDesktop(t)
	tests := []struct {
		name     string
		end      func(t *testing.T, rp *runProc, tree []proc)
		wantExit int // -1: killed
	}{
		{name: "agent closes stdin", wantExit: 0, end: func(t *testing.T, rp *runProc, tree []proc) {
			if err := rp.close(); err != nil {
				t.Errorf("close: %v", err)
			}
		}},
		{name: "proxy killed", wantExit: 1, end: func(t *testing.T, rp *runProc, tree []proc) {
			px, _ := find(tree, "__mcp-proxy")
			if err := unix.Kill(px.pid, unix.SIGKILL); err != nil {
				t.Fatalf("kill proxy: %v", err)
			}
			// The host notices on its own and exits; only then do we close our end.
			if !waitFor(10*time.Second, func() bool { q, ok := readProc(rp.cmd.Process.Pid); return !ok || q.state == 'Z' }) {
				t.Errorf("cua-host run still running 10s after its proxy was killed")
			}
			rp.close()
		}},
		{name: "host killed", wantExit: -1, end: func(t *testing.T, rp *runProc, tree []proc) {
			if err := rp.cmd.Process.Kill(); err != nil {
				t.Fatalf("kill host: %v", err)
			}
			rp.close()
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rp := startRun(t, unrestricted...)
			_, launched := rp.mustCall(t, "launch_app", map[string]any{"name": "xterm"})
			xterm := number(launched, "pid")
			host, ok := readProc(rp.cmd.Process.Pid)
			if !ok {
				t.Fatalf("cua-host run is gone")
			}
			tree := append([]proc{host}, descendants(host.pid)...)
			for _, want := range []string{"__mcp-proxy", "__worker", "Xvfb", "openbox", "dbus-daemon", "xterm"} {
				if _, ok := find(tree, want); !ok {
					t.Fatalf("no %s among the descendants of cua-host run: %v", want, tree)
				}
			}
			if !containsPID(tree, xterm) {
				t.Fatalf("launched xterm %d is not a descendant of cua-host run: %v", xterm, tree)
			}
			for _, p := range tree {
				t.Logf("  %v", p)
			}
			tc.end(t, rp, tree)
			if got := rp.cmd.ProcessState.ExitCode(); got != tc.wantExit {
				t.Errorf("cua-host run exit code = %d, want %d", got, tc.wantExit)
			}
			assertAllGone(t, tree, nil, 10*time.Second)
		})
	}
}

// TestProtectedProcesses: the session cannot target the processes that run it — the host,
// the MCP proxy (spawned before the worker so that its pid is in Hello), the worker, the
// private X server — even in unrestricted mode.
func TestProtectedProcesses(t *testing.T) {
	needDesktop(t)
	rp := startRun(t, unrestricted...)
	tree := descendants(rp.cmd.Process.Pid)
	px, _ := find(tree, "__mcp-proxy")
	wk, _ := find(tree, "__worker")
	xs, _ := find(tree, "Xvfb")
	for _, c := range []struct {
		name string
		pid  int
	}{{"host", rp.cmd.Process.Pid}, {"proxy", px.pid}, {"worker", wk.pid}, {"X server", xs.pid}} {
		t.Run(c.name, func(t *testing.T) {
			if c.pid <= 0 {
				t.Fatalf("no %s among %v", c.name, tree)
			}
			res := rp.call(t, "kill_app", map[string]any{"pid": c.pid})
			if !res.IsError || outcomeOf(res) != "not_started" {
				t.Errorf("kill_app %s (pid %d): isError=%v structured=%v", c.name, c.pid, res.IsError, structured(t, res))
			}
			if code := refusalCode(t, res); code != "self_target_denied" && code != "protected_ui_denied" {
				t.Errorf("kill_app %s: refusal %q, want self_target_denied", c.name, code)
			}
			if !stillThere(proc{pid: c.pid, start: mustStart(t, c.pid)}) {
				t.Errorf("%s (pid %d) is gone", c.name, c.pid)
			}
		})
	}
}

func mustStart(t *testing.T, pid int) uint64 {
	t.Helper()
	p, ok := readProc(pid)
	if !ok {
		t.Fatalf("pid %d is gone", pid)
	}
	return p.start
}

// TestProxyHoldsOnlyItsSession: the MCP proxy, which parses the agent's input, holds one
// socket — its session channel — and nothing of the host's: no control channel, no
// listener (in stdio mode), no X connection.
func TestProxyHoldsOnlyItsSession(t *testing.T) {
	needDesktop(t)
	rp := startRun(t, unrestricted...)
	rp.mustCall(t, "get_screen_size", nil) // the proxy is serving
	px, ok := find(descendants(rp.cmd.Process.Pid), "__mcp-proxy")
	if !ok {
		t.Fatal("no proxy")
	}
	dir := "/proc/" + strconv.Itoa(px.pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var sockets []string
	for _, e := range ents {
		target, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue
		}
		t.Logf("proxy fd %s -> %s", e.Name(), target)
		if strings.HasPrefix(target, "socket:") {
			sockets = append(sockets, e.Name())
		}
	}
	if len(sockets) != 1 || sockets[0] != "3" {
		t.Errorf("proxy sockets at fds %v, want only its session channel at fd 3", sockets)
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(px.pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range strings.Split(string(env), "\x00") {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", "CUA_HOST_HTTP_TOKEN":
			t.Errorf("proxy environment has %s", k)
		}
	}
}
