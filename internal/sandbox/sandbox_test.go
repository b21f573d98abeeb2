package sandbox

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// bwrapOrSkip returns bubblewrap's path, skipping (failing under CI) when it cannot run.
func bwrapOrSkip(t *testing.T) string {
	t.Helper()
	bwrap, err := Find()
	if err == nil {
		err = Probe(bwrap)
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and the sandbox is unavailable: %v", err)
		}
		t.Skip(err)
	}
	return bwrap
}

// run runs the shell script in a sandbox of spec and returns what it printed.
func run(t *testing.T, bwrap string, spec Spec, script string) string {
	t.Helper()
	cmd := exec.Command(bwrap, spec.Args([]string{"/bin/sh", "-c", script})...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sandboxed %q: %v\n%s", script, err, out)
	}
	return string(out)
}

func TestHidesAndKeeps(t *testing.T) {
	bwrap := bwrapOrSkip(t)
	dir := t.TempDir()
	secret := filepath.Join(dir, "cookie")
	hiddenDir := filepath.Join(dir, "journal")
	kept := filepath.Join(hiddenDir, "keep", "own-cookie")
	link := filepath.Join(dir, "link-to-cookie")
	other := filepath.Join(dir, "other")
	for _, f := range []struct{ path, data string }{
		{secret, "SECRET-COOKIE"}, {filepath.Join(hiddenDir, "segment"), "SECRET-JOURNAL"},
		{kept, "OWN-COOKIE"}, {other, "VISIBLE"},
	} {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, []byte(f.data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Hide: []string{link, hiddenDir, filepath.Join(dir, "missing")}, Keep: []string{kept}, Display: -1}
	out := run(t, bwrap, spec, "cat "+secret+" "+link+" "+kept+" "+other+"; ls "+hiddenDir+"; ls "+filepath.Join(hiddenDir, "keep"))
	for _, bad := range []string{"SECRET-COOKIE", "SECRET-JOURNAL", "segment"} {
		if strings.Contains(out, bad) {
			t.Errorf("sandboxed program saw %q:\n%s", bad, out)
		}
	}
	for _, good := range []string{"OWN-COOKIE", "VISIBLE", "own-cookie"} {
		if !strings.Contains(out, good) {
			t.Errorf("sandboxed program did not see %q:\n%s", good, out)
		}
	}
	// Outside, nothing changed.
	if b, _ := os.ReadFile(secret); string(b) != "SECRET-COOKIE" {
		t.Errorf("the hidden file itself = %q", b)
	}
}

func TestOwnProcessesOnly(t *testing.T) {
	bwrap := bwrapOrSkip(t)
	out := run(t, bwrap, Spec{Display: -1}, `ls /proc | grep -E '^[0-9]+$' | tr '\n' ' '; echo; grep CapEff /proc/self/status; if [ -e /proc/`+itoa(os.Getpid())+`/environ ] && [ `+itoa(os.Getpid())+` -gt 5 ]; then echo PARENT-VISIBLE; fi; tty || true`)
	if strings.Contains(out, "PARENT-VISIBLE") {
		t.Errorf("the launcher is visible in the sandbox's /proc:\n%s", out)
	}
	pids := strings.Fields(strings.SplitN(out, "\n", 2)[0])
	if len(pids) > 6 {
		t.Errorf("the sandbox sees %d processes (%v), want only its own few", len(pids), pids)
	}
	if os.Geteuid() != 0 && !strings.Contains(out, "CapEff:\t0000000000000000") {
		t.Errorf("the sandboxed program kept capabilities:\n%s", out)
	}
	if !strings.Contains(out, "not a tty") {
		t.Errorf("the sandboxed program has a terminal:\n%s", out)
	}
}

func TestOneXSocket(t *testing.T) {
	if _, err := os.Stat(xSocketDir); err != nil {
		t.Skip("no X sockets on this machine")
	}
	bwrap := bwrapOrSkip(t)
	// A socket of its own, which no other test's display can take away while the sandbox
	// is set up; the others in the directory must stay outside.
	num := -1
	for n := 990; n < 1000 && num < 0; n++ {
		path := filepath.Join(xSocketDir, "X"+strconv.Itoa(n))
		if _, err := os.Lstat(path); err == nil {
			continue
		}
		l, err := net.Listen("unix", path)
		if err != nil {
			continue
		}
		t.Cleanup(func() { l.Close() })
		num = n
	}
	if num < 0 {
		t.Skip("cannot make a socket in " + xSocketDir)
	}
	name := "X" + strconv.Itoa(num)
	out := run(t, bwrap, Spec{Display: num}, "ls "+xSocketDir)
	got := strings.Fields(out)
	want := []string{}
	if num >= 0 {
		want = append(want, name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("sockets in the sandbox = %v, want %v", got, want)
	}
}

func TestPersonSecrets(t *testing.T) {
	home := t.TempDir()
	for _, f := range []string{".Xauthority", ".ICEauthority", ".serverauth.123", ".bashrc"} {
		if err := os.WriteFile(filepath.Join(home, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := PersonSecrets(home, os.Getuid(), nil)
	for _, want := range []string{".Xauthority", ".ICEauthority", ".serverauth.123"} {
		if !slices.Contains(got, filepath.Join(home, want)) {
			t.Errorf("PersonSecrets = %v, missing %s", got, want)
		}
	}
	if slices.Contains(got, filepath.Join(home, ".bashrc")) {
		t.Errorf("PersonSecrets = %v, includes .bashrc", got)
	}
	if got := PersonSecrets(home, os.Getuid(), []string{home}); slices.ContainsFunc(got, func(p string) bool { return strings.HasPrefix(p, home) }) {
		t.Errorf("PersonSecrets with %s excepted = %v", home, got)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestRootCannotUndoTheSandbox: a program launched by root keeps no capability that
// would let it unmount what hides a file or open it by handle.
func TestRootCannotUndoTheSandbox(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the launcher is not root")
	}
	bwrap := bwrapOrSkip(t)
	dir := t.TempDir()
	secret := filepath.Join(dir, "cookie")
	if err := os.WriteFile(secret, []byte("SECRET-COOKIE"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := run(t, bwrap, Spec{Hide: []string{secret}, Display: -1}, "umount "+secret+" 2>&1; cat "+secret+" 2>&1; grep CapEff /proc/self/status")
	if strings.Contains(out, "SECRET-COOKIE") {
		t.Errorf("root inside the sandbox unhid the file:\n%s", out)
	}
	// CAP_SYS_ADMIN is bit 21, CAP_DAC_READ_SEARCH bit 2.
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:\t"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil || caps&(1<<21|1<<2) != 0 {
				t.Errorf("effective capabilities %s keep CAP_SYS_ADMIN or CAP_DAC_READ_SEARCH", v)
			}
		}
	}
}
