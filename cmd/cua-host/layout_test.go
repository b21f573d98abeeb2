package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// packageRow is one row of docs/architecture.md's package table: "| path | what it is |".
var packageRow = regexp.MustCompile(`^\| ([a-z0-9_./-]+) \| .+ \|$`)

// TestArchitectureListsEveryPackage: docs/architecture.md's package table (section 5) is
// the one layout of the repository; the README links to it. It must name every package
// `go list` finds, and no package that does not exist.
func TestArchitectureListsEveryPackage(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "\n## 5. Packages\n")
	if !ok {
		t.Fatal(`docs/architecture.md has no "## 5. Packages" section`)
	}
	table, _, _ = strings.Cut(table, "\n## ")
	listed := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		if m := packageRow.FindStringSubmatch(line); m != nil && m[1] != "package" {
			listed[m[1]] = true
		}
	}
	pkgs := modulePackages(t)
	var missing, stale []string
	for name := range pkgs {
		if name != "" && !listed[name] {
			missing = append(missing, name)
		}
	}
	for name := range listed {
		if _, ok := pkgs[name]; !ok {
			stale = append(stale, name)
		}
	}
	slices.Sort(missing)
	slices.Sort(stale)
	if len(missing) > 0 {
		t.Errorf("docs/architecture.md's package table does not list %s: add a line for each", strings.Join(missing, ", "))
	}
	if len(stale) > 0 {
		t.Errorf("docs/architecture.md's package table lists %s, which go list does not find", strings.Join(stale, ", "))
	}
}
