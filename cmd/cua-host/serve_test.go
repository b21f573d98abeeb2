package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cua-host/cua-host/internal/procfs"
	"github.com/cua-host/cua-host/test/testkit"
)

// TestServePythonExample runs examples/serve-python against the real binary: two trust
// domains on two private displays, a terminal that writes a file, a consent request the
// app answers, a revocation, and end-of-file with nothing left behind.
func TestServePythonExample(t *testing.T) {
	requireDisplayPrograms(t)
	testkit.NeedPrograms(t, "python3", "xterm")
	bin := buildBinary(t)
	out := t.TempDir()
	cmd := exec.Command("python3", "../../examples/serve-python/serve_demo.py", "--bin", bin, "--out", out)
	b, err := cmd.CombinedOutput()
	t.Logf("serve_demo.py:\n%s", b)
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(out, "serve.log"))
		t.Fatalf("serve_demo.py: %v\nserve.log:\n%s", err, log)
	}
}

// TestServeNodeExample runs examples/serve-node (the MCP TypeScript SDK for the sessions,
// JSON-RPC by hand for the control stream) against the real binary, as
// TestServePythonExample does; the file the terminal wrote is the oracle. `npm ci` installs
// the pinned SDK into a copy of the example, through an npm cache kept in the user's cache
// directory, so that later runs need no network.
func TestServeNodeExample(t *testing.T) {
	requireDisplayPrograms(t)
	testkit.NeedPrograms(t, "node", "npm", "xterm")
	bin := buildBinary(t)
	app := testkit.NpmInstall(t, "../../examples/serve-node", "package.json", "package-lock.json", "serve_demo.mjs")

	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "serve_demo.mjs", "--bin", bin, "--out", out)
	cmd.Dir = app
	b, err := cmd.CombinedOutput()
	t.Logf("serve_demo.mjs:\n%s", b)
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(out, "serve.log"))
		t.Fatalf("serve_demo.mjs: %v\nserve.log:\n%s", err, log)
	}
	wrote, err := os.ReadFile(filepath.Join(out, "alpha.txt"))
	if err != nil || strings.TrimSpace(string(wrote)) != "hello-from-node" {
		t.Errorf("the terminal alpha typed into wrote %q (%v), want hello-from-node", wrote, err)
	}
}

// serveProc is a `cua-host serve` driven over its pipes by the test.
type serveProc struct {
	t    *testing.T
	cmd  *exec.Cmd
	in   io.WriteCloser
	next int

	mu      sync.Mutex
	replies map[int]chan map[string]any
	notes   []map[string]any
}

func startServe(t *testing.T, bin string, argv0 ...string) *serveProc {
	t.Helper()
	args := append(append([]string{}, argv0...), bin, "serve", "--log-file", filepath.Join(t.TempDir(), "serve.log"))
	cmd := exec.Command(args[0], args[1:]...)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{t: t, cmd: cmd, in: in, replies: map[int]chan map[string]any{}}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			p.mu.Lock()
			if id, ok := m["id"].(float64); ok {
				if ch := p.replies[int(id)]; ch != nil {
					ch <- m
				}
			} else {
				p.notes = append(p.notes, m)
			}
			p.mu.Unlock()
		}
	}()
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	return p
}

func (p *serveProc) call(method string, params any) (map[string]any, map[string]any) {
	p.t.Helper()
	p.mu.Lock()
	p.next++
	id := p.next
	ch := make(chan map[string]any, 1)
	p.replies[id] = ch
	p.mu.Unlock()
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := p.in.Write(append(line, '\n')); err != nil {
		p.t.Fatalf("write %s: %v", method, err)
	}
	select {
	case m := <-ch:
		res, _ := m["result"].(map[string]any)
		e, _ := m["error"].(map[string]any)
		return res, e
	case <-time.After(30 * time.Second):
		p.t.Fatalf("no answer to %s", method)
	}
	return nil, nil
}

func (p *serveProc) mustCall(method string, params any) map[string]any {
	p.t.Helper()
	res, e := p.call(method, params)
	if e != nil {
		p.t.Fatalf("%s: %v", method, e)
	}
	return res
}

// stackPIDs returns every worker, proxy and display process of the serve's status.
func stackPIDs(st map[string]any) []int {
	var pids []int
	num := func(v any) int { f, _ := v.(float64); return int(f) }
	for _, w := range st["workers"].([]any) {
		pids = append(pids, num(w.(map[string]any)["pid"]))
	}
	for _, s := range st["sessions"].([]any) {
		pids = append(pids, num(s.(map[string]any)["proxy_pid"]))
	}
	for _, d := range st["displays"].([]any) {
		for _, pid := range d.(map[string]any)["pids"].([]any) {
			pids = append(pids, num(pid))
		}
	}
	return pids
}

// waitAllGone waits up to limit for every pid to be gone and path to be removed; it
// returns what is left.
func waitAllGone(pids []int, path string, limit time.Duration) []string {
	deadline := time.Now().Add(limit)
	for {
		var left []string
		for _, pid := range pids {
			if procfs.Alive(pid) {
				cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				left = append(left, fmt.Sprintf("pid %d (%s)", pid, strings.ReplaceAll(string(cmdline), "\x00", " ")))
			}
		}
		if _, err := os.Stat(path); err == nil {
			left = append(left, path)
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestServeTrustDomains: sessions of one domain share a worker and a display; another
// domain gets its own; a display one domain drives is refused to another.
func TestServeTrustDomains(t *testing.T) {
	requireDisplayPrograms(t)
	bin := buildBinary(t)
	p := startServe(t, bin)
	a := p.mustCall("create_session", map[string]any{"label": "a", "trust_domain": "one"})
	b := p.mustCall("create_session", map[string]any{"label": "b", "trust_domain": "one"})
	c := p.mustCall("create_session", map[string]any{"label": "c", "trust_domain": "two"})
	if a["worker_pid"] != b["worker_pid"] || a["display"] != b["display"] {
		t.Errorf("one domain: a on worker %v display %v, b on worker %v display %v; want them shared", a["worker_pid"], a["display"], b["worker_pid"], b["display"])
	}
	if a["worker_pid"] == c["worker_pid"] || a["display"] == c["display"] {
		t.Errorf("two domains share worker %v or display %v/%v", a["worker_pid"], a["display"], c["display"])
	}
	if a["proxy_pid"] == b["proxy_pid"] {
		t.Errorf("two sessions share proxy %v; each session has its own endpoint process", a["proxy_pid"])
	}
	_, e := p.call("create_session", map[string]any{"label": "d", "trust_domain": "three", "display": c["display"]})
	if e == nil || !strings.Contains(e["message"].(string), "never share a display") {
		t.Errorf("create_session on another domain's display = %v, want a refusal", e)
	}
	_, e = p.call("create_session", map[string]any{"label": "a", "trust_domain": "two"})
	if e == nil || !strings.Contains(e["message"].(string), "exists") {
		t.Errorf("create_session with a label in use = %v, want a refusal", e)
	}
	// Revoking a does not touch b, which shares its worker.
	p.mustCall("revoke_session", map[string]any{"session": "a"})
	if _, err := os.Stat(a["endpoint"].(map[string]any)["unix"].(string)); err == nil {
		t.Errorf("a's endpoint still exists after revoke_session")
	}
	st := p.mustCall("status", nil)
	if n := len(st["workers"].([]any)); n != 2 {
		t.Errorf("status after revoking a: %d workers, want 2", n)
	}
	if out, err := exec.Command(bin, "call", "--session", b["endpoint"].(map[string]any)["unix"].(string), "get_screen_size").CombinedOutput(); err != nil {
		t.Errorf("call into b after revoking a: %v\n%s", err, out)
	}
}

// TestServeLifecycle: closing the app's pipe, SIGKILL of the app, and SIGKILL of serve
// each leave no worker, proxy, display process or endpoint within 1 s.
func TestServeLifecycle(t *testing.T) {
	requireDisplayPrograms(t)
	bin := buildBinary(t)
	tests := []struct {
		name string
		// viaApp starts serve under an app process (a shell holding the pipes) that the
		// test can kill.
		viaApp bool
		end    func(p *serveProc)
	}{
		{name: "app closes the pipe", end: func(p *serveProc) { p.in.Close() }},
		{name: "app killed", viaApp: true, end: func(p *serveProc) { p.cmd.Process.Signal(syscall.SIGKILL) }},
		{name: "serve killed", end: func(p *serveProc) { p.cmd.Process.Signal(syscall.SIGKILL) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p *serveProc
			if tt.viaApp {
				// The app runs serve as its child and keeps its own copy of nothing: the
				// pipes are the test's, so serve learns of the app's death from the
				// parent-death signal, not from end-of-file.
				p = startServe(t, bin, "/bin/bash", "-c", `"$@" <&0 & wait`, "app")
			} else {
				p = startServe(t, bin)
			}
			s1 := p.mustCall("create_session", map[string]any{"label": "x", "trust_domain": "one"})
			p.mustCall("create_session", map[string]any{"label": "y", "trust_domain": "two", "http": true})
			st := p.mustCall("status", nil)
			pids := stackPIDs(st)
			if len(pids) < 8 {
				t.Fatalf("status lists %d processes, want 2 workers, 2 proxies and 2 displays: %v", len(pids), st)
			}
			dir := filepath.Dir(s1["endpoint"].(map[string]any)["unix"].(string))
			start := time.Now()
			tt.end(p)
			if left := waitAllGone(pids, dir, time.Second); len(left) > 0 {
				t.Errorf("1 s after the end, left: %s", strings.Join(left, ", "))
			} else {
				t.Logf("everything gone %v after the end", time.Since(start).Round(time.Millisecond))
			}
		})
	}
}

// waitNote waits up to limit for a notification method whose params pred accepts.
func (p *serveProc) waitNote(method string, limit time.Duration, pred func(map[string]any) bool) map[string]any {
	p.t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		for _, n := range p.notes {
			params, _ := n["params"].(map[string]any)
			if n["method"] == method && pred(params) {
				p.mu.Unlock()
				return params
			}
		}
		p.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	p.t.Fatalf("no %s notification within %v", method, limit)
	return nil
}

// TestServeStatusInFlight: a status taken while a call waits for the app's consent shows
// it in flight on its session and worker (and waiting for consent); one taken after the
// call returned shows nothing in flight.
func TestServeStatusInFlight(t *testing.T) {
	requireDisplayPrograms(t)
	bin := buildBinary(t)
	p := startServe(t, bin)
	a := p.mustCall("create_session", map[string]any{"label": "a", "trust_domain": "one"})
	p.mustCall("create_session", map[string]any{"label": "b", "trust_domain": "two"})
	sessionOf := func(st map[string]any, label string) map[string]any {
		for _, s := range st["sessions"].([]any) {
			if m := s.(map[string]any); m["label"] == label {
				return m
			}
		}
		t.Fatalf("status lists no session %s: %v", label, st)
		return nil
	}
	st := p.mustCall("status", nil)
	if st["in_flight_calls"] != float64(0) || sessionOf(st, "a")["in_flight_calls"] != float64(0) {
		t.Fatalf("idle status = %v, want nothing in flight", st)
	}

	// clipboard_read needs consent in a standard session: the call waits for the app.
	call := exec.Command(bin, "call", "--session", a["endpoint"].(map[string]any)["unix"].(string), "clipboard_read")
	var out strings.Builder
	call.Stdout, call.Stderr = &out, &out
	if err := call.Start(); err != nil {
		t.Fatal(err)
	}
	defer call.Process.Kill()
	req := p.waitNote("consent_request", 20*time.Second, func(m map[string]any) bool { return m["session"] == "a" })
	st = p.mustCall("status", nil)
	sa := sessionOf(st, "a")
	calls, _ := sa["calls"].([]any)
	if st["in_flight_calls"] != float64(1) || sa["in_flight_calls"] != float64(1) || sa["awaiting_consent"] != float64(1) ||
		len(calls) != 1 || calls[0].(map[string]any)["tool"] != "clipboard_read" || st["pending_consent"] != float64(1) {
		t.Errorf("status while clipboard_read waits for consent = %v; want it in flight on a, awaiting consent", st)
	}
	for _, w := range st["workers"].([]any) {
		w := w.(map[string]any)
		want := float64(0)
		if w["trust_domain"] == "one" {
			want = 1
		}
		if w["in_flight_calls"] != want || w["status_error"] != nil {
			t.Errorf("worker %v: in_flight_calls %v (error %v), want %v", w["trust_domain"], w["in_flight_calls"], w["status_error"], want)
		}
	}
	if sb := sessionOf(st, "b"); sb["in_flight_calls"] != float64(0) {
		t.Errorf("session b = %v, want nothing in flight", sb)
	}

	p.mustCall("consent_decision", map[string]any{"id": req["id"], "granted": true})
	if err := call.Wait(); err != nil {
		t.Fatalf("call clipboard_read after consent: %v\n%s", err, out.String())
	}
	st = p.mustCall("status", nil)
	if sa := sessionOf(st, "a"); st["in_flight_calls"] != float64(0) || sa["in_flight_calls"] != float64(0) || sa["awaiting_consent"] != float64(0) || len(sa["calls"].([]any)) != 0 {
		t.Errorf("status after the call returned = %v, want nothing in flight", st)
	}
}
