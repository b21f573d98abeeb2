package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain points the XDG data directories at a temporary one that declares the desktop
// application the test workers launch (sleep), so a standard session's launch_app of it
// needs no consent, as for any desktop application the system declares.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cua-worker-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	apps := filepath.Join(dir, "applications")
	entry := "[Desktop Entry]\nType=Application\nName=Sleep\nExec=/usr/bin/sleep 300\n"
	if err := os.MkdirAll(apps, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.WriteFile(filepath.Join(apps, "sleep.desktop"), []byte(entry), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Setenv("XDG_DATA_HOME", dir)
	os.Setenv("XDG_DATA_DIRS", dir)
	return m.Run()
}
