package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/policy"
)

// knownBug fails a regression test: each test here reproduces a bug the harnesses found
// (now fixed), and must keep passing.
func knownBug(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Fatalf("regression: "+format, args...)
}

// TestArgumentKeyFoldingBypassesPolicy reproduces a policy bypass: the policy checks
// argument constraints on the exact key ("marker"), while the tool handler decodes its
// arguments with encoding/json, which matches keys case-insensitively with Unicode
// folding (U+212A KELVIN SIGN folds to "k"). The worker re-encodes the arguments with
// sorted keys after the decision, so "mar\u212aer" lands after "marker" and its value —
// never checked by the policy — is what the handler uses.
func TestArgumentKeyFoldingBypassesPolicy(t *testing.T) {
	l, err := policy.Parse(policy.KindYAML, []policy.File{{Name: "p.yaml", Data: []byte(
		"allow:\n  rules:\n    - tool: marker\n      constraints:\n        marker: {max_length: 5}\n")}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	h, err := host.Start(ctx, host.Options{Policy: policy.NewSet(nil, l)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	s, err := h.CreateSession(ctx, host.SessionSpec{Label: "bypass"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "markers")
	long := `{"path":"` + path + `","marker":"too-long-for-the-policy"}`
	if res, _ := s.Call(ctx, "marker", []byte(long)); res.Outcome != host.NotStarted {
		t.Fatalf("a marker over the policy's max_length = %v, want NOT_STARTED permission_denied", res.Outcome)
	}
	folded := `{"path":"` + path + `","marker":"ok","mar\u212aer":"too-long-for-the-policy"}`
	res, err := s.Call(ctx, "marker", []byte(folded))
	b, _ := os.ReadFile(path)
	switch {
	case res.Outcome == host.NotStarted:
		return // refused: fixed
	case string(b) == "ok\n":
		return // the checked value was used: fixed
	case string(b) == "too-long-for-the-policy\n":
		knownBug(t, "Call(marker, %s) = %v and wrote %q: a key that encoding/json folds onto \"marker\" carries a value the policy never checked (worker/tool.DecodeArgs matches keys case-insensitively; worker/authorize.go decides on the exact keys)", folded, res.Outcome, b)
	default:
		t.Fatalf("Call(marker, %s) = %v %v, marker file %q", folded, res.Outcome, err, b)
	}
}
