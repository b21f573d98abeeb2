package x11_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports keeps x11 below authz and worker (DESIGN.md §7).
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/cua-host/cua-host/x11").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"/authz", "/worker", "/host", "/cmd", "/policy"} {
			if strings.HasPrefix(dep, "github.com/cua-host/cua-host") && strings.Contains(dep, banned) {
				t.Errorf("x11 depends on %s", dep)
			}
		}
	}
}
