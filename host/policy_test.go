package host

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/policy"
	"github.com/cua-host/cua-host/proto/contract"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// TestPolicyEnforcedInWorker: the host's policy snapshot travels in Hello and the worker
// enforces it at its dispatch point: a denied tool is refused (nothing runs) and absent
// from the tool list; `_`-prefixed arguments cannot change the decision.
func TestPolicyEnforcedInWorker(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user.yaml")
	os.WriteFile(user, []byte(`
allow:
  tools: [health_report, noop]
  rules:
    - tool: marker
      constraints:
        marker: {pattern: "^ok-"}
deny:
  tools: [sleep]
`), 0o600)
	managed := filepath.Join(dir, "managed.rego")
	os.WriteFile(managed, []byte(`package cua.policy

default allow := false

allow if input.tool != "panic"
`), 0o600)
	set, err := policy.LoadLayers(managed, user)
	if err != nil {
		t.Fatal(err)
	}
	h := startHost(t, Options{Policy: set})
	s := newSession(t, h, "p")
	ctx := context.Background()
	out := filepath.Join(dir, "markers")

	tests := []struct {
		name     string
		tool     string
		args     map[string]any
		wantCode string
		layer    string
	}{
		{name: "allowed by list", tool: "noop"},
		{name: "allowed by rule", tool: "marker", args: map[string]any{"path": out, "marker": "ok-1"}},
		{name: "rule fails", tool: "marker", args: map[string]any{"path": out, "marker": "bad-1"}, wantCode: "permission_denied", layer: "user policy"},
		{name: "reserved key cannot help", tool: "marker", args: map[string]any{"path": out, "marker": "bad-2", "_allow": true, "_mode": "unrestricted"}, wantCode: "permission_denied", layer: "user policy"},
		{name: "denied by user", tool: "sleep", args: map[string]any{"ms": 1}, wantCode: "permission_denied", layer: "user policy"},
		{name: "denied by managed first", tool: "panic", wantCode: "permission_denied", layer: "managed policy"},
		{name: "unlisted", tool: "marker_after_sleep", args: map[string]any{"path": out, "marker": "ok-2", "ms": 1}, wantCode: "permission_denied", layer: "user policy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.Call(ctx, tt.tool, mustJSON(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantCode == "" {
				if res.Outcome != Completed || res.IsError {
					t.Fatalf("Call(%s) = %+v, want completed", tt.tool, res)
				}
				return
			}
			if res.Outcome != NotStarted || res.Refusal == nil || res.Refusal.Code != tt.wantCode || !strings.Contains(res.Refusal.Message, tt.layer) {
				t.Errorf("Call(%s) = %+v, want NOT_STARTED %s naming %q", tt.tool, res, tt.wantCode, tt.layer)
			}
		})
	}
	b, _ := os.ReadFile(out)
	if string(b) != "ok-1\n" {
		t.Errorf("marker file = %q, want only the allowed call's marker", b)
	}
	tools, err := s.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ti := range tools {
		names = append(names, ti.Name)
	}
	if got := strings.Join(names, ","); got != "noop,marker,health_report" {
		t.Errorf("ListTools = %s, want exactly the tools the policy offers: noop,marker,health_report", got)
	}
}

// TestTamperedPolicyRefused: a worker refuses a Hello whose policy files do not hash to
// the hash the host sent, and never becomes Ready.
func TestTamperedPolicyRefused(t *testing.T) {
	w := spawnRawWorker(t, contract.WorkerFlags{LogLevel: slog.LevelDebug})
	f := w.hello()
	f.GetHello().Policy = &cuav1.PolicySnapshot{User: &cuav1.PolicyLayer{
		Kind:   "yaml",
		Files:  []*cuav1.PolicyFile{{Name: "p.yaml", Data: []byte("allow: [noop]\n")}},
		Sha256: strings.Repeat("0", 64),
	}}
	if err := w.ctrl.Send(f, nil); err != nil {
		t.Fatal(err)
	}
	reply, _, err := w.ctrl.Recv()
	if err != nil || reply.GetError() == nil || !strings.Contains(reply.GetError().GetMessage(), "hash mismatch") {
		t.Fatalf("reply = %v, %v; want an Error naming the hash mismatch", reply, err)
	}
	if code := w.exitCode(t); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
}
