package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolveDisplay: auto is nested when a person's display is in $DISPLAY and Xephyr is
// there to show one, private otherwise (saying why when a person's display was there);
// shared is the person's display, only when asked for by name.
func TestResolveDisplay(t *testing.T) {
	withXephyr := t.TempDir()
	if err := os.WriteFile(filepath.Join(withXephyr, "Xephyr"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	without := t.TempDir()
	tests := []struct {
		name, mode, display, path string
		want, why, err            string
	}{
		{name: "auto with a person's display", mode: "auto", display: ":3", path: withXephyr, want: "nested"},
		{name: "auto without Xephyr", mode: "auto", display: ":3", path: without, want: "private", why: "xserver-xephyr"},
		{name: "auto without a display", mode: "auto", path: withXephyr, want: "private"},
		{name: "shared", mode: "shared", display: ":3", path: withXephyr, want: ":3"},
		{name: "shared without a display", mode: "shared", path: withXephyr, err: "$DISPLAY"},
		{name: "a display by name", mode: ":5", display: ":3", path: withXephyr, want: ":5"},
		{name: "private", mode: "private", display: ":3", path: withXephyr, want: "private"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"DISPLAY": tt.display, "PATH": tt.path}
			got, why, err := resolveDisplay(tt.mode, func(k string) string { return env[k] })
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("resolveDisplay(%q) error = %v, want one naming %s", tt.mode, err, tt.err)
				}
			case err != nil || got != tt.want || (tt.why == "") != (why == "") || !strings.Contains(why, tt.why):
				t.Errorf("resolveDisplay(%q) = %q, %q, %v; want %q, a reason naming %q", tt.mode, got, why, err, tt.want, tt.why)
			}
		})
	}
}
