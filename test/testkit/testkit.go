// Package testkit is what cua-host's tests share: a logger on the test's output, the rule
// for tests that need other programs (skip on a laptop, fail when CI is set), the start-up
// of a private display, and the goroutine-leak check at the end of TestMain. It is for
// tests only; nothing shipped imports it.
package testkit

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cua-host/cua-host/host/display"
)

// Writer returns a writer that logs each write as one line of t's output.
func Writer(t testing.TB) io.Writer { return tWriter{t} }

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// DebugLogger returns a logger that writes to t's output at debug level.
func DebugLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(Writer(t), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Logger returns DebugLogger(t) when CUA_TEST_VERBOSE is set, and otherwise a logger that
// discards.
func Logger(t testing.TB) *slog.Logger {
	if os.Getenv("CUA_TEST_VERBOSE") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return DebugLogger(t)
}

// Missing returns why tests needing programs cannot run ("missing programs: …") or "" when
// every one of them is on PATH.
func Missing(programs ...string) string {
	var missing []string
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return "missing programs: " + strings.Join(missing, ", ") + " (run scripts/setup.sh)"
}

// Require skips t with reason, or fails it when CI is set (CI installs everything); an
// empty reason lets t run.
func Require(t testing.TB, reason string) {
	t.Helper()
	if reason == "" {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CI is set and %s", reason)
	}
	t.Skip(reason)
}

// StartDisplay starts a private display (host/display) within a minute. The caller
// closes it.
func StartDisplay(opts display.Options) (*display.Display, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, err := display.Start(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("start display: %w", err)
	}
	return d, nil
}

// SetEnv points this process's environment (DISPLAY, XAUTHORITY, the session bus…) at d.
func SetEnv(d *display.Display) {
	for _, kv := range d.Env() {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
}

// CheckLeaks returns the exit code of a TestMain whose tests exited with code: 1 when
// goroutines are left over (they are printed), else code.
func CheckLeaks(code int) int {
	if err := goleak.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "goleak:", err)
		if code == 0 {
			return 1
		}
	}
	return code
}

// NeedPrograms is Require(t, Missing(programs...)): t runs only when every program is on
// PATH.
func NeedPrograms(t testing.TB, programs ...string) {
	t.Helper()
	Require(t, Missing(programs...))
}

// NpmInstall copies files (names inside srcDir) to a directory of their own and runs
// `npm ci` there, through an npm cache kept in the user's cache directory so that later
// runs need no network. It returns the directory. An unreachable registry with the
// packages not cached skips t, or fails it when CI is set.
func NpmInstall(t testing.TB, srcDir string, files ...string) string {
	t.Helper()
	app := t.TempDir()
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join(srcDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(app, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	npmCache := filepath.Join(t.TempDir(), "npm-cache")
	if dir, err := os.UserCacheDir(); err == nil {
		npmCache = filepath.Join(dir, "cua-host", "npm")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, "npm", "ci", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--cache", npmCache)
	install.Dir = app
	install.Env = append(os.Environ(), "NO_UPDATE_NOTIFIER=1", "npm_config_update_notifier=false")
	start := time.Now()
	if b, err := install.CombinedOutput(); err != nil {
		if (strings.Contains(string(b), "ENOTFOUND") || strings.Contains(string(b), "EAI_AGAIN")) && os.Getenv("CI") == "" {
			t.Skipf("npm registry unreachable and the packages not in the npm cache:\n%s", b)
		}
		t.Fatalf("npm ci: %v\n%s", err, b)
	}
	t.Logf("npm ci: %v (cache %s)", time.Since(start).Round(time.Millisecond), npmCache)
	return app
}
