package display

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWatchCreated(t *testing.T) {
	tests := []struct {
		name   string
		before bool // the file exists before the watch begins
		create func(dir string) error
	}{
		{"created", false, func(dir string) error { return os.WriteFile(filepath.Join(dir, "ready"), nil, 0o600) }},
		{"moved in", false, func(dir string) error {
			tmp := filepath.Join(dir, ".tmp")
			if err := os.WriteFile(tmp, nil, 0o600); err != nil {
				return err
			}
			return os.Rename(tmp, filepath.Join(dir, "ready"))
		}},
		{"there already", true, func(dir string) error { return os.WriteFile(filepath.Join(dir, "ready"), nil, 0o600) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.before {
				if err := tt.create(dir); err != nil {
					t.Fatal(err)
				}
			}
			created, stop, err := watchCreated(dir, "ready")
			if err != nil {
				t.Fatalf("watchCreated: %v", err)
			}
			defer stop()
			// Another name does not count.
			if err := os.WriteFile(filepath.Join(dir, "ready-not"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if !tt.before {
				select {
				case <-created:
					t.Fatal("watchCreated reported the file before it existed")
				case <-time.After(50 * time.Millisecond):
				}
				if err := tt.create(dir); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case <-created:
			case <-time.After(5 * time.Second):
				t.Fatal("watchCreated never reported the file")
			}
			stop()
			stop() // safe to repeat
		})
	}
}
