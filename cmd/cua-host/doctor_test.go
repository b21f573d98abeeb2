package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestDoctorCommand runs `cua-host doctor` in-process: usage errors exit 2; a display
// nobody serves exits 1, with the JSON keys scripts read and x_server among the missing
// checks; the text form ends with the verdict.
func TestDoctorCommand(t *testing.T) {
	getenv := func(display string) func(string) string {
		home := t.TempDir()
		return func(k string) string {
			switch k {
			case "DISPLAY":
				return display
			case "HOME":
				return home
			case "PATH":
				return os.Getenv("PATH")
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad display", []string{"--display", "foo"}, `--display "foo": want auto, private or :N`},
		{"argument", []string{"now"}, `unexpected arguments ["now"]`},
		{"unknown flag", []string{"--fix"}, "flag provided but not defined: -fix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			if code := runDoctor(t.Context(), tc.args, getenv(""), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("doctor %v = %d, stderr %q; want 2 saying %q", tc.args, code, stderr.String(), tc.want)
			}
		})
	}
	var stdout, stderr strings.Builder
	if code := runDoctor(t.Context(), []string{"-h"}, getenv(""), &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "usage: cua-host doctor") {
		t.Errorf("doctor -h = %d, stdout %q; want 0 with the usage", code, stdout.String())
	}

	stdout.Reset()
	stderr.Reset()
	code := runDoctor(t.Context(), []string{"--json"}, getenv(":65043"), &stdout, &stderr)
	if code != 1 {
		t.Fatalf("doctor --json with DISPLAY=:65043 = %d (stderr %q), want 1", code, stderr.String())
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("doctor --json printed %q: %v", stdout.String(), err)
	}
	for _, k := range []string{"display", "display_source", "shared", "ready", "missing", "checks"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("doctor --json has no %q: %s", k, stdout.String())
		}
	}
	if rep["display"] != ":65043" || rep["ready"] != false || rep["shared"] != true {
		t.Errorf("doctor --json = display %v ready %v shared %v; want :65043, false, true", rep["display"], rep["ready"], rep["shared"])
	}
	missing, _ := rep["missing"].([]any)
	if len(missing) == 0 || missing[0] != "x_server" {
		t.Errorf("missing = %v, want x_server first", rep["missing"])
	}
	checks, _ := rep["checks"].([]any)
	for _, c := range checks {
		m, _ := c.(map[string]any)
		for _, k := range []string{"id", "title", "status", "required", "found"} {
			if _, ok := m[k]; !ok {
				t.Errorf("check %v has no %q", m, k)
			}
		}
		if s := m["status"]; s != "ok" && s != "warn" && s != "missing" {
			t.Errorf("check %v: status %v, want ok, warn or missing", m["id"], s)
		}
	}

	stdout.Reset()
	if code := runDoctor(t.Context(), []string{"--display", ":65043"}, getenv(""), &stdout, &stderr); code != 1 ||
		!strings.Contains(stdout.String(), "display :65043 (from --display, shared with a person)") ||
		!strings.Contains(stdout.String(), "not ready: missing X server") {
		t.Errorf("doctor --display :65043 = %d, stdout:\n%s\nwant 1, the display named and the verdict", code, stdout.String())
	}
}
