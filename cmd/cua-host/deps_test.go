package main

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/cua-host/cua-host"

// deps lists the module's packages pkg depends on (pkg included).
func deps(t *testing.T, pkg string, tests bool) map[string]bool {
	t.Helper()
	args := []string{"list", "-deps"}
	if tests {
		args = append(args, "-test")
	}
	args = append(args, "-f", "{{.ImportPath}}", pkg)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go %v: %v", args, err)
	}
	m := map[string]bool{}
	for _, l := range strings.Fields(string(out)) {
		if strings.HasPrefix(l, module) {
			m[strings.TrimPrefix(l, module+"/")] = true
		}
	}
	return m
}

// TestShippedBinaryHasNoTestTools: the test-only tools (the side-effect oracle among them)
// live in internal/testworker, which the shipped binaries must not link.
func TestShippedBinaryHasNoTestTools(t *testing.T) {
	for _, bin := range []string{"./", "../cua-worker"} {
		if d := deps(t, bin, false); d["internal/testworker"] {
			t.Errorf("%s links internal/testworker", bin)
		}
	}
}

// TestImportDirection: imports point down (cmd → host/worker → authz → policy; x11 only
// under worker); nothing imports cmd; policy imports neither authz, host, worker nor x11;
// x11 never imports authz.
func TestImportDirection(t *testing.T) {
	rules := []struct {
		pkg       string
		forbidden []string
	}{
		{"policy", []string{"authz", "host", "worker", "x11", "proto/wire"}},
		{"x11", []string{"authz", "host", "worker", "policy"}},
		{"authz", []string{"host", "worker", "x11"}},
		{"proto/wire", []string{"authz", "host", "worker", "x11", "policy"}},
		{"host", []string{"worker", "x11"}},
		{"client", []string{"host", "worker", "x11", "authz", "policy"}},
		{"mcpproxy", []string{"host", "worker", "x11", "authz", "policy"}},
	}
	for _, r := range rules {
		d := deps(t, "../../"+r.pkg, false)
		for dep := range d {
			for _, bad := range r.forbidden {
				if dep == bad || strings.HasPrefix(dep, bad+"/") {
					t.Errorf("%s imports %s", r.pkg, dep)
				}
			}
			if strings.HasPrefix(dep, "cmd/") {
				t.Errorf("%s imports %s", r.pkg, dep)
			}
		}
	}
}
