package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/cua-host/cua-host/test/testkit"
)

// cuaHost is the cua-host binary built for this run.
var cuaHost string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cua-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	cuaHost = filepath.Join(dir, "cua-host")
	build := exec.Command("go", "build", "-o", cuaHost, "github.com/cua-host/cua-host/cmd/cua-host")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build cua-host:", err)
		return 1
	}
	// Orphans of the processes we kill are re-parented to this process, so the tests can
	// see (and reap) anything left behind.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: PR_SET_CHILD_SUBREAPER:", err)
		return 1
	}
	return m.Run()
}

// need skips (or, when CI is set, fails) the test when a program is missing.
func need(t testing.TB, progs ...string) {
	t.Helper()
	testkit.NeedPrograms(t, progs...)
}

func needDesktop(t testing.TB) { need(t, "Xvfb", "openbox", "dbus-daemon", "xterm") }

// lockedBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type lockedBuffer struct {
	mu  sync.Mutex // mu guards buf
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runProc is one `cua-host run` driven by the go-sdk client over its stdio.
type runProc struct {
	cmd     *exec.Cmd
	cs      *mcp.ClientSession
	logPath string
	stderr  *lockedBuffer

	closeOnce sync.Once
	closeErr  error
}

// startRun starts `cua-host run ARGS…` (logs at debug level to a file, shown when the test
// fails) and connects the go-sdk client to it through CommandTransport.
func startRun(t testing.TB, args ...string) *runProc {
	t.Helper()
	return startRunEnv(t, nil, args...)
}

// startRunEnv is startRun with variables added to the environment.
func startRunEnv(t testing.TB, env []string, args ...string) *runProc {
	t.Helper()
	rp := &runProc{logPath: filepath.Join(t.TempDir(), "run.log"), stderr: &lockedBuffer{}}
	full := append([]string{"run", "--log-file", rp.logPath, "--log-level", "debug"}, args...)
	rp.cmd = exec.Command(cuaHost, full...)
	rp.cmd.Stderr = rp.stderr
	if env != nil {
		rp.cmd.Env = append(os.Environ(), env...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cua-e2e", Version: "0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: rp.cmd, TerminateDuration: 10 * time.Second}, nil)
	if err != nil {
		if rp.cmd.Process != nil {
			rp.cmd.Process.Kill()
			rp.cmd.Wait()
		}
		t.Fatalf("connect to cua-host run %v: %v\nstderr: %s\nlog:\n%s", args, err, rp.stderr, rp.log())
	}
	rp.cs = cs
	t.Cleanup(func() {
		rp.close()
		if t.Failed() {
			t.Logf("cua-host run %v stderr: %s\nlog:\n%s", args, rp.stderr, rp.log())
		}
	})
	return rp
}

// close ends the MCP session the way a client does (it closes the server's stdin, then
// waits for the process to exit) and returns the wait error.
func (rp *runProc) close() error {
	rp.closeOnce.Do(func() { rp.closeErr = rp.cs.Close() })
	return rp.closeErr
}

func (rp *runProc) log() string {
	b, _ := os.ReadFile(rp.logPath)
	return string(b)
}

func (rp *runProc) call(t testing.TB, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := rp.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// mustCall calls a tool and fails the test unless it completed without error.
func (rp *runProc) mustCall(t testing.TB, name string, args any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	res := rp.call(t, name, args)
	st := structured(t, res)
	if res.IsError || outcomeOf(res) != "completed" {
		t.Fatalf("tools/call %s %v: isError=%v structured=%v text=%q", name, args, res.IsError, st, text(res))
	}
	return res, st
}

func (rp *runProc) toolNames(t testing.TB) map[string]bool {
	t.Helper()
	res, err := rp.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	names := map[string]bool{}
	for _, tl := range res.Tools {
		names[tl.Name] = true
	}
	return names
}

func structured(t testing.TB, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("marshal structuredContent: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
	return m
}

// outcomeOf returns the outcome a tools/call result carries in _meta.
func outcomeOf(res *mcp.CallToolResult) any { return res.Meta["cua-host/outcome"] }

// detailsOf returns what a tools/call result reports beyond its contract shape (_meta).
func detailsOf(res *mcp.CallToolResult) map[string]any {
	m, _ := res.Meta["cua-host/details"].(map[string]any)
	return m
}

func refusalCode(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	r, _ := structured(t, res)["refusal"].(map[string]any)
	c, _ := r["code"].(string)
	return c
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// number reads a JSON number field as an int.
func number(m map[string]any, key string) int {
	f, _ := m[key].(float64)
	return int(f)
}

// waitFor polls cond every 20 ms until it holds or limit passes.
func waitFor(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
