package e2e

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const httpToken = "e2e-token-0123456789abcdefghijklmnopqrstuvwxyz"

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

type bearerRT struct {
	token string
	base  http.RoundTripper
}

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// TestHTTP: `cua-host run --http` serves streamable HTTP on loopback only with the bearer
// token from the environment (here under the reference driver's name): 401 without it, 403 for a foreign Origin or Host, and a
// go-sdk streamable client with the token drives it. SIGTERM ends it cleanly.
func TestHTTP(t *testing.T) {
	needDesktop(t)
	port := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	logPath := t.TempDir() + "/run.log"
	cmd := exec.Command(cuaHost, "run", "--display", "private", "--http", addr, "--log-file", logPath, "--log-level", "debug")
	// The reference driver's variable, which cua-host reads when its own is unset.
	cmd.Env = append(os.Environ(), "CUA_DRIVER_RS_MCP_HTTP_TOKEN="+httpToken)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	defer func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("stderr: %s\nlog:\n%s", stderr, b)
		}
	}()
	if !waitFor(20*time.Second, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}) {
		t.Fatalf("nothing listens on %s", addr)
	}
	host, _ := readProc(cmd.Process.Pid)
	tree := append([]proc{host}, descendants(cmd.Process.Pid)...)

	base := &http.Transport{}
	defer base.CloseIdleConnections()
	hc := &http.Client{Transport: base, Timeout: 10 * time.Second}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	tests := []struct {
		name   string
		header map[string]string
		host   string
		want   int
	}{
		{name: "no token", want: http.StatusUnauthorized},
		{name: "wrong token", header: map[string]string{"Authorization": "Bearer " + strings.Repeat("z", 45)}, want: http.StatusUnauthorized},
		{name: "foreign origin", header: map[string]string{"Authorization": "Bearer " + httpToken, "Origin": "https://evil.example"}, want: http.StatusForbidden},
		{name: "foreign host", header: map[string]string{"Authorization": "Bearer " + httpToken}, host: "evil.example:" + strconv.Itoa(port), want: http.StatusForbidden},
		{name: "token", header: map[string]string{"Authorization": "Bearer " + httpToken}, want: http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(init))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatalf("POST: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ct := &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: &http.Client{Transport: bearerRT{httpToken, base}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cua-e2e-http", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("streamable connect: %v", err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) < 10 {
		t.Fatalf("tools/list over HTTP: %d tools, %v", len(tools.Tools), err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_screen_size"})
	if err != nil || res.IsError {
		t.Fatalf("get_screen_size over HTTP: %+v, %v", res, err)
	}
	if st := structured(t, res); number(st, "width") != 1280 || outcomeOf(res) != "completed" {
		t.Errorf("get_screen_size = %v", st)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_session"}); err != nil || structured(t, res)["transport"] != "mcp_http" || structured(t, res)["client_kind"] != "mcp" {
		t.Errorf("get_session over HTTP = %+v, %v; want transport mcp_http, client_kind mcp", res, err)
	}
	cs.Close()

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if code := cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("exit code after SIGTERM = %d, want 0", code)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("cua-host run --http did not exit after SIGTERM")
	}
	assertAllGone(t, tree, nil, 10*time.Second)
}
