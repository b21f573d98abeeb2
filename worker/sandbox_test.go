package worker

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cua-host/cua-host/internal/sandbox"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// TestSandboxKeepsOnlyTheResourcesBesideTheCookie: a launch's XENVIRONMENT is bound into
// the sandbox only when it sits beside the launch's cookie (where x11.Launch writes the X
// resources of an untrusted launch); a file named anywhere else stays hidden or absent.
func TestSandboxKeepsOnlyTheResourcesBesideTheCookie(t *testing.T) {
	bwrap, err := sandbox.Find()
	if err == nil {
		err = sandbox.Probe(bwrap)
	}
	if err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	wrap := launchWrapper(&cuav1.Sandbox{}, false, slog.New(slog.DiscardHandler))
	dir, elsewhere := t.TempDir(), t.TempDir()
	cookie, beside, other := filepath.Join(dir, "launch-1.xauth"), filepath.Join(dir, "xt-resources"), filepath.Join(elsewhere, "secret")
	for _, p := range []string{cookie, beside, other} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bound := func(env ...string) []string {
		t.Helper()
		argv, err := wrap([]string{"/bin/true"}, append([]string{"DISPLAY=:99"}, env...))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for i := 0; i+2 < len(argv); i++ {
			if argv[i] == "--bind" && argv[i+1] == argv[i+2] {
				out = append(out, argv[i+1])
			}
		}
		return out
	}
	resolve := func(p string) string {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if got := bound("XAUTHORITY="+cookie, "XENVIRONMENT="+beside); !slices.Contains(got, resolve(cookie)) || !slices.Contains(got, resolve(beside)) {
		t.Errorf("resources beside the cookie: bound %q, want the cookie and the resources", got)
	}
	if got := bound("XAUTHORITY="+cookie, "XENVIRONMENT="+other); slices.Contains(got, resolve(other)) {
		t.Errorf("XENVIRONMENT elsewhere: bound %q, want %s left out", got, other)
	}
	if got := bound("XENVIRONMENT=" + beside); slices.Contains(got, resolve(beside)) {
		t.Errorf("XENVIRONMENT without a cookie: bound %q, want it left out", got)
	}
}
