package worker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/policy"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/worker/tool"
)

// authorizer is the worker's authorization pipeline, built once from Hello and immutable
// afterwards.
type authorizer struct {
	now    func() time.Time
	policy *policy.Set
}

func newAuthorizer(hello *cuav1.Hello, now func() time.Time) (*authorizer, error) {
	set, err := policyFromHello(hello.GetPolicy())
	if err != nil {
		return nil, err
	}
	return &authorizer{now: now, policy: set}, nil
}

// policyFromHello rebuilds the host's policy snapshot from the files it shipped and
// refuses it unless every layer hashes to what the host computed.
func policyFromHello(snap *cuav1.PolicySnapshot) (*policy.Set, error) {
	layer := func(name string, l *cuav1.PolicyLayer) (*policy.Layer, error) {
		if l == nil {
			return nil, nil
		}
		var kind policy.Kind
		switch l.GetKind() {
		case "yaml":
			kind = policy.KindYAML
		case "rego":
			kind = policy.KindRego
		default:
			return nil, fmt.Errorf("%s policy: unknown kind %q", name, l.GetKind())
		}
		files := make([]policy.File, 0, len(l.GetFiles()))
		for _, f := range l.GetFiles() {
			files = append(files, policy.File{Name: f.GetName(), Data: f.GetData()})
		}
		parsed, err := policy.Parse(kind, files)
		if err != nil {
			return nil, fmt.Errorf("%s policy: %w", name, err)
		}
		if !strings.EqualFold(parsed.SHA256(), l.GetSha256()) {
			return nil, fmt.Errorf("%s policy: hash mismatch: host says %s, files hash to %s", name, l.GetSha256(), parsed.SHA256())
		}
		return parsed, nil
	}
	managed, err := layer(policy.LayerManaged, snap.GetManaged())
	if err != nil {
		return nil, err
	}
	user, err := layer(policy.LayerUser, snap.GetUser())
	if err != nil {
		return nil, err
	}
	return policy.NewSet(managed, user), nil
}

// admitManifest checks a CreateSession's manifest against its mode and hash and returns
// the hash the session is bound to.
func (a *authorizer) admitManifest(mode authz.Mode, manifest []byte, wantHash string) (string, error) {
	switch {
	case mode == authz.Bounded && len(manifest) == 0:
		return "", fmt.Errorf("a bounded session needs a manifest")
	case mode != authz.Bounded && len(manifest) > 0:
		return "", fmt.Errorf("only bounded sessions take a manifest (mode %s)", mode)
	case len(manifest) == 0:
		return "", nil
	}
	sum := sha256.Sum256(manifest)
	got := hex.EncodeToString(sum[:])
	if !strings.EqualFold(got, wantHash) {
		return "", fmt.Errorf("manifest hash mismatch: frame says %q, bytes hash to %s", wantHash, got)
	}
	return got, nil
}

// authorize runs the pipeline of docs/security.md for one call and returns what the
// handler will see. Any refusal means nothing ran.
func (a *authorizer) authorize(ctx context.Context, s *session, name string, rawArgs []byte) (*tool.Call, *tool.Tool, *authz.Refusal) {
	args, r := parseArgs(rawArgs)
	if r != nil {
		return nil, nil, r
	}
	name, args = policy.Sanitize(name, args)
	if d := a.policy.Decide(ctx, name, args); !d.Allow {
		return nil, nil, authz.Refuse(authz.CodePermissionDenied, "%s", d.Reason)
	}
	t, ok := s.w.reg.Lookup(name)
	if !ok {
		return nil, nil, authz.Refuse(authz.CodeUnclassifiedTool, "tool %q has no reviewed risk classification", name)
	}
	clean := emptyArgs
	if len(args) > 0 {
		var err error
		if clean, err = json.Marshal(args); err != nil {
			return nil, nil, authz.Refuse(authz.CodeInvalidArguments, "re-encode arguments: %v", err)
		}
	}
	return &tool.Call{Name: name, Args: clean, Session: s.state}, t, nil
}

var emptyArgs = json.RawMessage("{}")

// parseArgs decodes a call's arguments, which must be one JSON object.
func parseArgs(raw []byte) (map[string]any, *authz.Refusal) {
	// Absent and null arguments are the empty object (MCP clients send both).
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "{}" || string(t) == "null" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, authz.Refuse(authz.CodeInvalidArguments, "arguments are not valid JSON: %v", err)
	}
	if dec.More() {
		return nil, authz.Refuse(authz.CodeInvalidArguments, "trailing data after the arguments object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, authz.Refuse(authz.CodeInvalidArguments, "arguments must be a JSON object")
	}
	return m, nil
}

// listTools answers ListTools for session s: the tools it may call.
func (w *worker) listTools(s *session) *cuav1.ToolList {
	out := &cuav1.ToolList{}
	ctx := s.ctx
	for _, t := range w.reg.Tools() {
		if !w.authorizer.policy.Listed(ctx, t.Name) {
			continue
		}
		ann, _ := json.Marshal(t.Annotations)
		out.Tools = append(out.Tools, &cuav1.ToolInfo{
			Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Annotations: ann,
		})
	}
	return out
}
