package policy_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/cua-host/cua-host/policy"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestNoModuleImports keeps policy/ at the bottom of the import graph: it
// imports nothing else from cua-host (docs/architecture.md, "Import rules") but
// the leaf packages in leafImports, which themselves import nothing from cua-host.
func TestNoModuleImports(t *testing.T) {
	const module = "github.com/cua-host/cua-host/"
	leafImports := map[string]string{module + "internal/strictyaml": "../internal/strictyaml"}
	check := func(dir string, allowed map[string]string) {
		t.Helper()
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if _, ok := allowed[path]; !ok && strings.HasPrefix(path, module) {
					t.Errorf("%s imports %s; policy must import nothing else from cua-host", name, path)
				}
			}
			checked++
		}
		if checked == 0 {
			t.Fatalf("no source files checked in %s", dir)
		}
	}
	check(".", leafImports)
	for _, dir := range leafImports {
		check(dir, nil)
	}
}

// parse builds a layer from one in-memory file or fails the test.
func parse(t testing.TB, name, src string) *policy.Layer {
	t.Helper()
	kind := policy.KindYAML
	if strings.HasSuffix(name, ".rego") {
		kind = policy.KindRego
	}
	l, err := policy.Parse(kind, []policy.File{{Name: name, Data: []byte(src)}})
	if err != nil {
		t.Fatalf("Parse(%s) = %v", name, err)
	}
	return l
}

// yamlLayer parses a YAML policy or fails the test.
func yamlLayer(t testing.TB, src string) *policy.Layer {
	t.Helper()
	return parse(t, "policy.yaml", src)
}

// regoLayer parses a Rego policy or fails the test.
func regoLayer(t testing.TB, src string) *policy.Layer {
	t.Helper()
	return parse(t, "policy.rego", src)
}

// writeTree writes files (name → contents) under a new temporary directory
// and returns it.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Policies shared by several tests.
const (
	// readOnlyYAML allows observation tools and a bounded click.
	readOnlyYAML = `
allow:
  tools: [get_config, list_windows, get_window_state, type_text_chars]
  rules:
    - tool: click
      constraints:
        x: {min: 0, max: 1920}
        y: {min: 0, max: 1080}
deny:
  tools: [kill_app, list_windows]
`
	// readOnlyRego is the Rego counterpart of readOnlyYAML.
	readOnlyRego = `package cua.policy

default allow := false

read_only := {"get_config", "get_window_state", "type_text"}
denied := {"kill_app", "list_windows"}

allow if {
	not denied[input.tool]
	read_only[input.tool]
}

allow if {
	input.tool == "click"
	is_number(input.arguments.x)
	is_number(input.arguments.y)
	input.arguments.x >= 0
	input.arguments.x <= 1920
	input.arguments.y >= 0
	input.arguments.y <= 1080
}
`
)
