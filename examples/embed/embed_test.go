package main

import (
	"context"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/cua-host/cua-host/proto/contract"
	"github.com/cua-host/cua-host/test/testkit"
	"github.com/cua-host/cua-host/worker"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == contract.WorkerSubcommand {
		os.Exit(worker.Main(os.Args[2:], worker.Config{NewRegistry: worker.DesktopRegistry}))
	}
	os.Exit(m.Run())
}

// TestEmbedDemo runs the example end to end on a private display and checks its effects
// with oracles of its own: the file the terminal wrote and a decodable screenshot.
func TestEmbedDemo(t *testing.T) {
	testkit.NeedPrograms(t, "Xvfb", "openbox", "dbus-daemon", "xterm")
	dir := t.TempDir()
	if err := run(context.Background(), dir); err != nil {
		t.Fatalf("run: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "terminal-output.txt"))
	if err != nil || string(b) != "hello from cua-host\n" {
		t.Errorf("terminal output = %q, %v", b, err)
	}
	f, err := os.Open(filepath.Join(dir, "desktop.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot does not decode: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 800 {
		t.Errorf("screenshot is %v, want 1280x800", b)
	}
}
