package e2e

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cua-host/cua-host/host/display"
)

// TestTTYConsentTerminalIsProtected: `cua-host run --consent tty` started from a terminal
// on the very display it guards. The agent tries to answer the consent question itself by
// typing into that terminal — by its pid, into the focused window, by clicking it — and
// every attempt is refused: the terminal (an ancestor of the host) is never a target. The
// oracle is the terminal's own input: a `cat` in it writes whatever reaches it to a file,
// and only the person's marker, typed with xdotool, arrives.
func TestTTYConsentTerminalIsProtected(t *testing.T) {
	needDesktop(t)
	need(t, "xdotool")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, err := display.Start(ctx, display.Options{WindowManager: true, Width: 1024, Height: 768})
	if err != nil {
		t.Fatalf("start display: %v", err)
	}
	defer d.Close()
	env := append(os.Environ(), d.Env()...)

	dir := t.TempDir()
	typed := filepath.Join(dir, "typed.txt")
	logPath := filepath.Join(dir, "run.log")
	port := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	// The person's terminal: the host runs in the background, cat reads the terminal.
	script := cuaHost + " run --display " + d.Name() + " --consent tty --http " + addr +
		" --log-file " + logPath + " --log-level debug & exec cat > " + typed
	term := exec.Command("xterm", "-title", "person-terminal", "-e", "sh", "-c", script)
	term.Env = append(env, "CUA_HOST_HTTP_TOKEN="+httpToken)
	if err := term.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		term.Process.Kill()
		term.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("log:\n%s", b)
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
	xdo := func(args ...string) string {
		cmd := exec.Command("xdotool", args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("xdotool %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	win := xdo("search", "--sync", "--name", "person-terminal")
	if i := strings.IndexByte(win, '\n'); i >= 0 {
		win = win[:i]
	}
	xdo("windowactivate", "--sync", win)

	base := &http.Transport{}
	defer base.CloseIdleConnections()
	ct := &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: &http.Client{Transport: bearerRT{httpToken, base}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "tty-attacker", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	wid, _ := strconv.ParseUint(win, 10, 32)
	refusal := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var st struct {
			Status  string `json:"status"`
			Refusal *struct {
				Code string `json:"code"`
			} `json:"refusal"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &st)
		if st.Refusal == nil || st.Status != "refused" || res.Meta["cua-host/outcome"] != "not_started" {
			t.Errorf("%s %v = %s, want a refusal", name, args, b)
			return ""
		}
		return st.Refusal.Code
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"type_text", map[string]any{"text": "y\n", "pid": term.Process.Pid, "window_id": wid}, []string{"self_target_denied"}},
		{"type_text", map[string]any{"text": "y\n"}, []string{"protected_ui_denied"}},
		{"press_key", map[string]any{"key": "Return"}, []string{"protected_ui_denied"}},
		{"click", map[string]any{"x": 20, "y": 20, "pid": term.Process.Pid, "window_id": wid}, []string{"self_target_denied"}},
		{"kill_app", map[string]any{"pid": term.Process.Pid}, []string{"self_target_denied"}},
	} {
		if got := refusal(c.tool, c.args); got != "" && !contains(c.want, got) {
			t.Errorf("%s %v refused with %s, want one of %v", c.tool, c.args, got, c.want)
		}
	}
	// The person types a marker; it is the only thing the terminal ever received.
	xdo("type", "--window", win, "person-marker\n")
	if !waitFor(10*time.Second, func() bool {
		b, _ := os.ReadFile(typed)
		return strings.Contains(string(b), "person-marker")
	}) {
		b, _ := os.ReadFile(typed)
		t.Fatalf("the person's marker never reached the terminal; it received %q", b)
	}
	if b, _ := os.ReadFile(typed); string(b) != "person-marker\n" {
		t.Errorf("the terminal received %q, want only the person's marker", b)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
