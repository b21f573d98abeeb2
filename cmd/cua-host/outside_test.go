package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/test/testkit"
)

// outsideReferences are strings that point at documents outside the repository, which a
// clone cannot follow. They are assembled from pieces so that this file does not match
// itself.
var outsideReferences = []string{
	"DESIGN" + ".md",
	".." + "/shared",
	"shared" + "/reference",
	"shared" + "/seeds",
}

// TestNoReferenceOutsideTheRepository: no tracked file cites a document outside the
// repository. A fact such a document held belongs in docs/architecture.md, an ADR, or the
// doc that carries it, and the citation points there.
func TestNoReferenceOutsideTheRepository(t *testing.T) {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		testkit.Require(t, "not a git checkout: "+err.Error())
	}
	root := strings.TrimSpace(string(top))
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	checked := 0
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(root, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree, not yet in the index
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			continue // binary
		}
		checked++
		for _, ref := range outsideReferences {
			if i := bytes.Index(data, []byte(ref)); i >= 0 {
				line := 1 + bytes.Count(data[:i], []byte("\n"))
				t.Errorf("%s:%d mentions %q, outside the repository: cite docs/architecture.md, an ADR or the doc that carries the fact", name, line, ref)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d tracked files; expected the whole repository", checked)
	}
}
