package desktop_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/test/xevlog/harness"
)

var (
	xclientOnce sync.Once
	xclientPath string
	xclientErr  error
)

// startXClient builds test/xclient once and runs it with args; it returns the path of the
// log it writes and waits until the log has a line of type want.
func startXClient(t *testing.T, want string, args ...string) string {
	t.Helper()
	harness.Require(t)
	xclientOnce.Do(func() {
		dir, err := os.MkdirTemp("", "xclient")
		if err != nil {
			xclientErr = err
			return
		}
		xclientPath = filepath.Join(dir, "xclient")
		if out, err := exec.Command("go", "build", "-o", xclientPath, "github.com/cua-host/cua-host/test/xclient").CombinedOutput(); err != nil {
			xclientErr = err
			t.Logf("%s", out)
		}
	})
	if xclientErr != nil {
		t.Fatalf("build xclient: %v", xclientErr)
	}
	log := filepath.Join(t.TempDir(), "xclient.jsonl")
	cmd := exec.Command(xclientPath, append([]string{"-out", log}, args...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitLine(t, log, want)
	return log
}

// waitLine waits until the xclient log has a line of type typ.
func waitLine(t *testing.T, log, typ string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !hasLine(log, typ) {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log)
			t.Fatalf("xclient logged no %q line:\n%s", typ, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func hasLine(log, typ string) bool {
	b, _ := os.ReadFile(log)
	return strings.Contains(string(b), `"type":"`+typ+`"`)
}

// TestClipboardOwnerThatDoesNotAnswer: a client owns CLIPBOARD and never answers a
// request (its log shows the request arrived); clipboard_read is refused
// clipboard_unavailable, with or without the text.
func TestClipboardOwnerThatDoesNotAnswer(t *testing.T) {
	reg, _ := setup(t)
	log := startXClient(t, "clipboard_owned", "-title", "hung owner", "-own-clipboard")
	for _, args := range []map[string]any{{"include_text": true}, {}} {
		start := time.Now()
		r, err := call(t, reg, "clipboard_read", args)
		if code := refusalCode(err); code != authz.CodeClipboardUnavailable {
			t.Fatalf("clipboard_read(%v) = %v, %v; want refusal %s", args, r, err, authz.CodeClipboardUnavailable)
		}
		t.Logf("refused after %v: %v", time.Since(start).Round(time.Millisecond), err)
	}
	if !hasLine(log, "selection_request") {
		t.Errorf("the owner never saw a request: the refusal did not come from its silence")
	}
}

// TestClipboardTakenBack: a client takes CLIPBOARD back as soon as cua-host takes it (its
// log says so); clipboard_write reports clipboard_unavailable, never success.
func TestClipboardTakenBack(t *testing.T) {
	reg, _ := setup(t)
	log := startXClient(t, "clipboard_owned", "-title", "jealous owner", "-own-clipboard", "-keep-clipboard")
	r, err := call(t, reg, "clipboard_write", map[string]any{"text": "mine"})
	switch {
	case refusalCode(err) == authz.CodeClipboardUnavailable:
		t.Logf("refused: %v", err)
	case err != nil:
		t.Fatalf("clipboard_write = %v; want code %s", err, authz.CodeClipboardUnavailable)
	case !r.IsError || structured(t, r)["error_code"] != string(authz.CodeClipboardUnavailable):
		t.Fatalf("clipboard_write = %+v; want an error result with code %s", r, authz.CodeClipboardUnavailable)
	}
	waitLine(t, log, "clipboard_retaken")
}
