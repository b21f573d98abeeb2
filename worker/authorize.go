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
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/worker/tool"
)

// authorizer is the worker's authorization pipeline, built once from Hello and immutable
// afterwards.
type authorizer struct {
	now func() time.Time
}

func newAuthorizer(hello *cuav1.Hello, now func() time.Time) (*authorizer, error) {
	return &authorizer{now: now}, nil
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
	name, args = sanitize(name, args)
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
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "{}" {
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

// sanitize drops every top-level argument whose key starts with "_" and canonicalises
// tool aliases. It does not modify args.
func sanitize(name string, args map[string]any) (string, map[string]any) {
	if name == "type_text_chars" {
		name = "type_text"
	}
	out := make(map[string]any, len(args))
	for k, v := range args {
		if !strings.HasPrefix(k, "_") {
			out[k] = v
		}
	}
	return name, out
}

// listTools answers ListTools for session s: the tools it may call.
func (w *worker) listTools(s *session) *cuav1.ToolList {
	out := &cuav1.ToolList{}
	for _, t := range w.reg.Tools() {
		ann, _ := json.Marshal(t.Annotations)
		out.Tools = append(out.Tools, &cuav1.ToolInfo{
			Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Annotations: ann,
		})
	}
	return out
}
