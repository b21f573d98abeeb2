package atspi_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports keeps atspi a backend: below authz and worker, and independent of x11
// (docs/architecture.md, "Import rules").
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/cua-host/cua-host/x11/atspi").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if !strings.HasPrefix(dep, "github.com/cua-host/cua-host") || dep == "github.com/cua-host/cua-host/x11/atspi" {
			continue
		}
		t.Errorf("atspi depends on %s", dep)
	}
}
