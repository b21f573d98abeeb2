package host

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/proto/contract"
)

// shStackProxy is a stand-in proxy for StartStack: it writes its pid, then the bootstrap
// line, to files in dir and waits to be released.
func shStackProxy(t *testing.T, dir string) ProxyOptions {
	t.Helper()
	script := `echo $$ > ` + filepath.Join(dir, "pid") + `
IFS= read -r line <&4 || exit 5
printf '%s\n' "$line" > ` + filepath.Join(dir, "bootstrap") + `
cat <&4 >/dev/null
exit 0`
	return ProxyOptions{Logger: testLogger(t), Path: "/bin/sh", Args: []string{"-c", script}, CloseGrace: time.Second}
}

func TestStartStack(t *testing.T) {
	dir := t.TempDir()
	before := countFDs(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	st, err := StartStack(ctx, StackOptions{
		Host:    Options{Logger: testLogger(t)},
		Proxy:   shStackProxy(t, dir),
		Session: SessionSpec{Label: "stacked"},
	})
	if err != nil {
		t.Fatalf("StartStack: %v", err)
	}
	if got := st.Session().Label; got != "stacked" {
		t.Errorf("Session().Label = %q, want stacked", got)
	}
	var line []byte
	if !waitUntil(5*time.Second, func() bool { line, _ = os.ReadFile(filepath.Join(dir, "bootstrap")); return len(line) > 0 }) {
		t.Fatalf("the proxy got no bootstrap line")
	}
	b, err := contract.ParseBootstrap(strings.TrimSuffix(string(line), "\n"))
	if err != nil {
		t.Fatalf("ParseBootstrap(%q): %v", line, err)
	}
	if string(b.Generation) != string(st.Host().GenerationBytes()) || b.Version != st.Host().ProtocolVersion() || b.HTTPToken != "" {
		t.Errorf("bootstrap = %+v, want the worker's generation and version", b)
	}
	sctx, scancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer scancel()
	st.Shutdown(sctx)
	st.Close() // idempotent after Shutdown
	for name, ch := range map[string]<-chan struct{}{"proxy": st.Proxy().Exited(), "worker": st.Host().Exited()} {
		select {
		case <-ch:
		default:
			t.Errorf("the %s still runs after Shutdown", name)
		}
	}
	if code := st.Proxy().ExitCode(); code != 0 {
		t.Errorf("proxy exit code = %d, want 0 (released)", code)
	}
	if after := countFDs(t); after != before {
		t.Errorf("descriptors: %d before StartStack, %d after Shutdown", before, after)
	}
}

// TestStartStackFailureLeavesNothing: a worker that cannot start takes the proxy down too.
func TestStartStackFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	before := countFDs(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := StartStack(ctx, StackOptions{
		Host:    Options{Logger: testLogger(t), Env: []string{"NOT_ALLOWLISTED=1"}},
		Proxy:   shStackProxy(t, dir),
		Session: SessionSpec{Label: "never"},
	})
	if err == nil {
		t.Fatalf("StartStack with a bad worker environment: no error")
	}
	var pid int
	if !waitUntil(5*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	}) {
		t.Fatalf("the proxy never ran")
	}
	if _, gone := waitGone(pid, 5*time.Second); !gone {
		t.Errorf("proxy %d still runs after StartStack failed", pid)
	}
	if after := countFDs(t); after != before {
		t.Errorf("descriptors: %d before StartStack, %d after it failed", before, after)
	}
}
