package main

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/cua-host/cua-host"

// pkgInfo is one package of the module as go list sees it, paths relative to the module.
type pkgInfo struct {
	imports []string // direct imports of the module's packages
	deps    []string // transitive dependencies among the module's packages
}

// modulePackages lists every package of the module with its imports and dependencies
// inside the module (test files excluded). A failure of go list fails the test: these
// rules are checked everywhere, CI included, never skipped.
func modulePackages(t *testing.T) map[string]pkgInfo {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list %s/...: %v", module, err)
	}
	local := func(paths string) []string {
		var out []string
		for _, p := range strings.Fields(paths) {
			if p == module {
				out = append(out, ".")
			} else if rel, ok := strings.CutPrefix(p, module+"/"); ok {
				out = append(out, rel)
			}
		}
		return out
	}
	pkgs := map[string]pkgInfo{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 {
			t.Fatalf("go list: unexpected line %q", line)
		}
		name := strings.TrimPrefix(strings.TrimPrefix(parts[0], module), "/")
		pkgs[name] = pkgInfo{imports: local(parts[1]), deps: local(parts[2])}
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages of %s, expected the whole module", len(pkgs), module)
	}
	return pkgs
}

// under reports whether pkg is tree or inside it.
func under(pkg, tree string) bool { return pkg == tree || strings.HasPrefix(pkg, tree+"/") }

// testKits are the module's test-support subtrees: the test programs and kits under test/
// (test/testworker, the worker with test-only tools such as the side-effect oracle, among
// them) and host/hosttest (raw workers for harnesses). Only tests and test programs may
// depend on them.
var testKits = []string{"test", "host/hosttest"}

// testKit reports whether pkg is a test kit or a test program.
func testKit(pkg string) bool {
	for _, k := range testKits {
		if under(pkg, k) {
			return true
		}
	}
	return false
}

// TestShippedBinaryHasNoTestTools: the shipped binaries link no test kit, so none of the
// test-only tools (the side-effect oracle among them) can reach a user.
func TestShippedBinaryHasNoTestTools(t *testing.T) {
	pkgs := modulePackages(t)
	for _, bin := range []string{"cmd/cua-host", "cmd/cua-worker"} {
		if _, ok := pkgs[bin]; !ok {
			t.Fatalf("go list did not report %s", bin)
		}
		for _, d := range pkgs[bin].deps {
			if testKit(d) {
				t.Errorf("%s links %s", bin, d)
			}
		}
	}
}

// TestImportRules is the module's one import-rules test (docs/architecture.md, "Import
// rules"): imports point down (cmd → host/worker → authz → policy), proto is below
// everything, nothing imports cmd, x11 is used only by the worker and never imports authz,
// policy imports neither; and the untrusted side (mcpproxy, which parses the agent's input)
// and the caller's library (client) depend on nothing trusted, only on the contract
// (proto/contract), which itself depends on nothing of the module but proto. internal/
// holds leaf packages only: nothing under it depends on host, worker or authz. Production
// packages (everything but test/ and host/hosttest; test files are not packages here)
// never depend on a test kit.
func TestImportRules(t *testing.T) {
	pkgs := modulePackages(t)
	rules := []struct {
		pkg       string   // a package and everything under it
		forbidden []string // module subtrees it must not depend on, even indirectly
	}{
		{"policy", []string{"authz", "host", "worker", "x11", "proto/wire", "client", "mcpproxy"}},
		{"x11", []string{"authz", "host", "worker", "policy", "client", "mcpproxy"}},
		{"authz", []string{"host", "worker", "x11", "client", "mcpproxy"}},
		{"proto", []string{"authz", "host", "worker", "x11", "policy", "client", "mcpproxy", "internal"}},
		{"host", []string{"worker", "x11", "mcpproxy"}},
		{"worker", []string{"host", "client", "mcpproxy"}},
		{"client", []string{"host", "authz", "worker", "policy", "x11", "mcpproxy"}},
		{"mcpproxy", []string{"host", "authz", "worker", "policy", "x11"}},
		{"internal", []string{"host", "worker", "authz"}},
	}
	for name, p := range pkgs {
		for _, r := range rules {
			if !under(name, r.pkg) {
				continue
			}
			for _, d := range p.deps {
				for _, bad := range r.forbidden {
					if under(d, bad) {
						t.Errorf("%s depends on %s (%s must not depend on %s)", name, d, r.pkg, bad)
					}
				}
			}
		}
		// The contract depends on nothing of the module but proto.
		if under(name, "proto/contract") {
			for _, d := range p.deps {
				if !under(d, "proto") {
					t.Errorf("%s depends on %s; the contract may depend only on proto", name, d)
				}
			}
		}
		// Production code links no test kit.
		if !testKit(name) {
			for _, d := range p.deps {
				if testKit(d) {
					t.Errorf("%s depends on %s; production packages must not depend on a test kit (test/..., host/hosttest)", name, d)
				}
			}
		}
		// Nothing imports cmd.
		for _, d := range p.deps {
			if under(d, "cmd") {
				t.Errorf("%s depends on %s; nothing imports cmd", name, d)
			}
		}
		// x11 is used only by the worker (test programs and benchmarks aside).
		if !under(name, "worker") && !under(name, "x11") && !under(name, "test") {
			for _, d := range p.imports {
				if under(d, "x11") {
					t.Errorf("%s imports %s; only the worker uses x11", name, d)
				}
			}
		}
	}
}
