// Package conformance checks cua-host against the reference driver's published tool
// contract (testdata/cua-driver-contract, version 0.7.0) with a client cua-host did not
// write: conformance.mjs drives `cua-host run` through the MCP TypeScript SDK and validates
// every result with ajv against the contract's own schemas and against the outputSchema
// cua-host advertises, while xdotool, xwininfo, xclip, test/xevlog and the files a terminal
// writes confirm the effects. Every tool cua-host lists is driven into a refusal through the
// SDK's plain callTool, which validates structuredContent against that outputSchema.
package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/display"
	"github.com/cua-host/cua-host/test/testkit"
)

// report is what conformance.mjs writes to report.json.
type report struct {
	ContractVersion string `json:"contract_version"`
	// ManifestContractVersion is what `cua-host manifest` says, GetConfigContractVersion
	// what get_config reported during the run.
	ManifestContractVersion  string                       `json:"manifest_contract_version"`
	GetConfigContractVersion string                       `json:"get_config_contract_version"`
	NotOnLinux               map[string]map[string]string `json:"not_on_linux"`
	Tools                    map[string]toolReport        `json:"tools"`
	// RefusalSweep is, per listed tool, the refusal code callTool handed back for the
	// sweep's call, or null when it handed back none.
	RefusalSweep map[string]*string `json:"refusal_sweep"`
	Violations   []struct {
		Tool string `json:"tool"`
		What string `json:"what"`
	} `json:"violations"`
}

type toolReport struct {
	Listed          bool           `json:"listed"`
	Kinds           map[string]int `json:"kinds"`
	Calls           int            `json:"calls"`
	Successes       int            `json:"successes"`
	SchemaValid     int            `json:"schema_valid"`
	OwnSchemaValid  int            `json:"own_schema_valid"`
	Refused         int            `json:"refused"`
	OracleChecks    int            `json:"oracle_checks"`
	OracleConfirmed int            `json:"oracle_confirmed"`
	Notes           []string       `json:"notes"`
	Violations      []string       `json:"violations"`
}

// TestContractConformance runs conformance.mjs against the freshly built binary: pass one
// unrestricted on a private display, pass two in standard mode on a display this test
// starts, where consent is denied. It fails on every violation the script reports, and on
// a report that does not cover every contract tool.
func TestContractConformance(t *testing.T) {
	testkit.NeedPrograms(t, "Xvfb", "openbox", "dbus-daemon", "xterm", "xdotool", "xwininfo", "xprop", "xclip", "gtk3-demo-application", "node", "npm")
	dir := t.TempDir()
	bin := build(t, dir, "github.com/cua-host/cua-host/cmd/cua-host", "cua-host")
	xevlog := build(t, dir, "github.com/cua-host/cua-host/test/xevlog", "xevlog")
	app := installScript(t)
	contractDir, err := filepath.Abs(filepath.Join("testdata", "cua-driver-contract"))
	if err != nil {
		t.Fatal(err)
	}

	// The display of pass two: a person's desktop the session does not own.
	d, err := testkit.StartDisplay(display.Options{WindowManager: true, Width: 1024, Height: 768})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	shared := map[string]string{}
	for _, kv := range d.Env() {
		k, v, _ := strings.Cut(kv, "=")
		shared[k] = v
	}
	sharedFile := filepath.Join(dir, "shared-env.json")
	b, _ := json.Marshal(shared)
	if err := os.WriteFile(sharedFile, b, 0o600); err != nil {
		t.Fatal(err)
	}

	// CUA_CONFORMANCE_OUT keeps the report, the run logs and the screenshots after the test.
	out := filepath.Join(dir, "out")
	if keep := os.Getenv("CUA_CONFORMANCE_OUT"); keep != "" {
		out = keep
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "conformance.mjs", "--bin", bin, "--xevlog", xevlog, "--out", out,
		"--contract", contractDir, "--shared-env", sharedFile)
	cmd.Dir = app
	cmd.Env = append(os.Environ(), "NO_UPDATE_NOTIFIER=1")
	output, runErr := cmd.CombinedOutput()
	t.Logf("conformance.mjs:\n%s", output)

	raw, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		logRuns(t, out)
		t.Fatalf("conformance.mjs wrote no report (%v): %v", runErr, err)
	}
	var rep report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	checkReport(t, rep, contractDir)
	if runErr != nil && !t.Failed() {
		t.Errorf("conformance.mjs: %v, although its report lists no violation", runErr)
	}
	if t.Failed() {
		logRuns(t, out)
	}
}

// checkReport fails t for every violation in rep, and for a contract tool the report
// neither exercised (a call, and for a tool that succeeded, a confirmed effect) nor
// declared unavailable on Linux. The per-tool table ends the log.
func checkReport(t *testing.T, rep report, contractDir string) {
	t.Helper()
	var m struct {
		ContractVersion string `json:"contract_version"`
		Tools           []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	b, err := os.ReadFile(filepath.Join(contractDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if rep.ManifestContractVersion != m.ContractVersion || rep.GetConfigContractVersion != m.ContractVersion {
		t.Errorf("cua-host manifest says contract %q and get_config %q; the contract files are %q", rep.ManifestContractVersion, rep.GetConfigContractVersion, m.ContractVersion)
	}
	if rep.ContractVersion != m.ContractVersion {
		t.Errorf("report is for contract %q, the manifest is %q", rep.ContractVersion, m.ContractVersion)
	}
	var lines []string
	for _, tool := range m.Tools {
		tr, ok := rep.Tools[tool.Name]
		_, absent := rep.NotOnLinux[tool.Name]
		switch {
		case absent:
		case !ok || tr.Calls == 0:
			t.Errorf("%s: the contract tool was never called", tool.Name)
		case tr.Successes > 0 && tr.OracleConfirmed == 0 && len(tr.Violations) == 0:
			t.Errorf("%s: succeeded %d times and no effect was confirmed", tool.Name, tr.Successes)
		}
		if len(tr.Violations) > 0 {
			shown := tr.Violations
			if len(shown) > maxShown {
				shown = shown[:maxShown]
			}
			t.Errorf("%s: %d violation(s) (%s):\n\t- %s%s", tool.Name, len(tr.Violations), kinds(tr.Kinds),
				strings.Join(shown, "\n\t- "), more(len(tr.Violations)-len(shown)))
		}
		lines = append(lines, fmt.Sprintf("%-26s %-6v %5d %8d/%-4d %8d/%-4d %7d  %s", tool.Name, tr.Listed, tr.Calls, tr.SchemaValid, tr.Successes,
			tr.OracleConfirmed, tr.OracleChecks, tr.Refused, verdict(tr, absent)))
	}
	inContract := map[string]bool{}
	for _, tool := range m.Tools {
		inContract[tool.Name] = true
	}
	for _, v := range rep.Violations {
		if !inContract[v.Tool] {
			t.Errorf("%s: %s", v.Tool, v.What)
		}
	}
	// The refusal sweep: every listed tool, contract or not, refused through callTool.
	if len(rep.RefusalSweep) < len(m.Tools) {
		t.Errorf("the refusal sweep covered %d tools; every listed tool (at least the %d of the contract) must be driven into a refusal", len(rep.RefusalSweep), len(m.Tools))
	}
	var swept []string
	for name, code := range rep.RefusalSweep {
		if code == nil {
			t.Errorf("%s: the refusal sweep got no refusal back through callTool", name)
			continue
		}
		swept = append(swept, name+"="+*code)
	}
	sort.Strings(swept)
	t.Logf("refusal sweep through the SDK's callTool (%d tools): %s", len(swept), strings.Join(swept, ", "))
	sort.Strings(lines)
	t.Logf("contract %s conformance (schema-valid: successes whose structuredContent validates; oracle-ok: effects confirmed outside cua-host):\n%-26s %-6s %5s %13s %13s %7s  %s\n%s",
		m.ContractVersion, "tool", "listed", "calls", "schema-valid", "oracle-ok", "refused", "result", strings.Join(lines, "\n"))
}

// maxShown bounds the violations printed per tool; report.json keeps them all.
const maxShown = 8

func more(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("\n\t- … and %d more (report.json)", n)
}

// kinds renders the violation counts by kind, largest first.
func kinds(k map[string]int) string {
	names := make([]string, 0, len(k))
	for name := range k {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		if k[names[i]] != k[names[j]] {
			return k[names[i]] > k[names[j]]
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s ×%d", name, k[name])
	}
	return strings.Join(parts, ", ")
}

func verdict(tr toolReport, absent bool) string {
	switch {
	case len(tr.Violations) > 0:
		return fmt.Sprintf("FAIL: %s", kinds(tr.Kinds))
	case absent:
		return "not on Linux"
	case tr.Calls == 0:
		return "FAIL: not called"
	}
	return "ok"
}

// build builds pkg to dir/name.
func build(t *testing.T, dir, pkg, name string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// installScript copies conformance.mjs and its package files to a directory of its own and
// installs the pinned packages there (testkit.NpmInstall).
func installScript(t *testing.T) string {
	t.Helper()
	return testkit.NpmInstall(t, ".", "package.json", "package-lock.json", "conformance.mjs")
}

// logRuns logs the tail of every `cua-host run` log the script kept.
func logRuns(t *testing.T, out string) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(out, "run-*.log"))
	for _, f := range logs {
		b, _ := os.ReadFile(f)
		if len(b) > 6000 {
			b = b[len(b)-6000:]
		}
		t.Logf("%s (tail):\n%s", filepath.Base(f), b)
	}
}
