package policy_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/policy"
)

// benchCases are one decision each way through readOnlyYAML or
// readOnlyRego.
var benchCases = []struct {
	name  string
	tool  string
	args  map[string]any
	allow bool
}{
	{name: "allow_by_rule", tool: "click", args: map[string]any{"x": 100.0, "y": 200.0, "_session": "s"}, allow: true},
	{name: "deny_by_constraint", tool: "click", args: map[string]any{"x": 5000.0, "y": 200.0}},
	{name: "deny_unlisted", tool: "zoom", args: map[string]any{"window_id": 3.0}},
}

// benchDecide measures Decide for every bench case through s.
func benchDecide(b *testing.B, s *policy.Set) {
	for _, c := range benchCases {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			if d := s.Decide(ctx, c.tool, c.args); d.Allow != c.allow {
				b.Fatalf("Decide(%s) = %+v, want allow=%v", c.tool, d, c.allow)
			}
			b.ReportAllocs()
			for b.Loop() {
				s.Decide(ctx, c.tool, c.args)
			}
		})
	}
}

func BenchmarkDecideYAML(b *testing.B) {
	benchDecide(b, policy.NewSet(nil, yamlLayer(b, readOnlyYAML)))
}

func BenchmarkDecideRego(b *testing.B) {
	benchDecide(b, policy.NewSet(nil, regoLayer(b, readOnlyRego)))
}

func BenchmarkListedRego(b *testing.B) {
	s := policy.NewSet(nil, regoLayer(b, readOnlyRego))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s.Listed(ctx, "get_config")
	}
}

func BenchmarkParseRego(b *testing.B) {
	files := []policy.File{{Name: "policy.rego", Data: []byte(readOnlyRego)}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := policy.Parse(policy.KindRego, files); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOPAEvalProcess makes the allow_by_rule decision the way an
// operator would from a shell, one `opa eval` process per decision, for
// scale against BenchmarkDecideRego. It builds opa from the module cache
// first (OPA is a dependency) and skips when that is impossible.
func BenchmarkOPAEvalProcess(b *testing.B) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		b.Skipf("skipping: no go tool to build opa with: %v", err)
	}
	dir := b.TempDir()
	opa := filepath.Join(dir, "opa")
	// go install pkg@version builds outside this module, so the opa command's own
	// dependencies need not be in our go.sum; the version is the one go.mod requires.
	version, err := exec.Command(goTool, "list", "-m", "-f", "{{.Version}}", "github.com/open-policy-agent/opa").Output()
	if err != nil {
		b.Skipf("skipping: cannot find the opa version in go.mod: %v", err)
	}
	build := exec.Command(goTool, "install", "github.com/open-policy-agent/opa@"+strings.TrimSpace(string(version)))
	build.Env = append(os.Environ(), "GOBIN="+dir)
	if out, err := build.CombinedOutput(); err != nil {
		b.Skipf("skipping: cannot build opa: %v\n%s", err, out)
	}
	policyFile := filepath.Join(dir, "policy.rego")
	if err := os.WriteFile(policyFile, []byte(readOnlyRego), 0o644); err != nil {
		b.Fatal(err)
	}
	const input = `{"server":"cua-host","tool":"click","arguments":{"x":100,"y":200}}`
	eval := func() string {
		cmd := exec.Command(opa, "eval", "--format=raw", "--stdin-input", "--data", policyFile, "data.cua.policy.allow")
		cmd.Stdin = strings.NewReader(input)
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("opa eval: %v", err)
		}
		return strings.TrimSpace(string(out))
	}
	if got := eval(); got != "true" {
		b.Fatalf("opa eval = %q, want true", got)
	}
	b.ReportAllocs()
	for b.Loop() {
		eval()
	}
}
