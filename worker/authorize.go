package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/internal/jsonobj"
	"github.com/cua-host/cua-host/policy"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// authorizer is the worker's authorization pipeline, built once from Hello and immutable
// afterwards (bind completes it once the registry exists, before Ready).
type authorizer struct {
	now func() time.Time
	log *slog.Logger
	// inventory is every tool this worker may know: the shipped inventory plus
	// Config.ExtraInventory. Manifests are checked against it.
	inventory *authz.Inventory
	// pipe decides calls against the inventory restricted to the tools this worker
	// registered (and the not_exposed entries): a call of any other tool is
	// unclassified_tool here, whatever another worker may register.
	pipe *authz.Pipeline
	res  *resolver
	// protected is res.isProtected, made once by bind for every call's tool.Call.Protected.
	protected func(pid int) bool
}

func newAuthorizer(hello *cuav1.Hello, cfg *Config) (*authorizer, error) {
	set, err := policyFromHello(hello.GetPolicy())
	if err != nil {
		return nil, err
	}
	inv := authz.DefaultInventory()
	if len(cfg.ExtraInventory) > 0 {
		if inv, err = inv.With(cfg.ExtraInventory...); err != nil {
			return nil, err
		}
	}
	return &authorizer{
		now:       cfg.Now,
		log:       cfg.Logger,
		inventory: inv,
		pipe:      authz.NewPipeline(set, inv),
		res:       &resolver{protect: newProtector(hello.GetProtectedPids()), selfPID: os.Getpid(), pinnable: map[string]bool{}},
	}, nil
}

// bind completes the authorizer with the registry: the desktop to resolve targets through
// (closer, when it implements Desktop) and what each tool declares it touches
// (tool.Tool.Touches). It logs every
// registered tool the inventory does not expose: such a tool is never listed and every call
// of it is refused.
func (a *authorizer) bind(reg *tool.Registry, closer io.Closer) {
	if d, ok := closer.(Desktop); ok {
		a.res.desk = d
	}
	a.protected = a.res.isProtected
	if d, ok := closer.(infrastructureFinder); ok {
		a.res.protect.infra = func(ctx context.Context) ([]int, error) {
			inf, err := d.Infrastructure(ctx)
			return inf.PIDs(), err
		}
	}
	var here []authz.Entry
	for _, e := range a.inventory.Entries() {
		if _, registered := reg.Lookup(e.Tool); registered || !e.Exposed() {
			here = append(here, e)
		}
	}
	restricted, err := authz.NewInventory(here...)
	if err != nil {
		panic(err) // entries of a valid inventory stay valid
	}
	a.pipe = authz.NewPipeline(a.pipe.Policy(), restricted)
	a.res.touches = reg.Declared()
	for _, t := range reg.Tools() {
		if t.Touches.Window {
			a.res.pinnable[t.Name] = true
		}
		if _, r := a.pipe.Inventory().Classify(t.Name); r != nil {
			a.log.Warn("registered tool is not in the inventory; every call is refused", "tool", t.Name, "code", r.Code)
		}
	}
}

// policyHashes returns the SHA-256 of the managed and user policy layers ("" when absent).
func (a *authorizer) policyHashes() (managed, user string) {
	set := a.pipe.Policy()
	if l := set.Managed(); l != nil {
		managed = l.SHA256()
	}
	if l := set.User(); l != nil {
		user = l.SHA256()
	}
	return managed, user
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

// request is a call as stages 1 and 2 of the pipeline leave it: its arguments decoded once
// and sanitized, its tool name canonical. Nothing decodes the arguments or canonicalizes
// the name again; the handler gets args and the target resolved from them.
type request struct {
	// name is the canonical tool name.
	name string
	// args is the decoded, sanitized object (nil when refusal is set).
	args map[string]any
	// refusal is why the arguments are unusable; authorize reports it.
	refusal *authz.Refusal
}

// newRequest runs stages 1 and 2 for one call: it decodes the arguments (one JSON object)
// and sanitizes them (authz.Sanitize: reserved keys dropped, the tool name canonical; the
// decoded map is this call's own, so the keys are dropped from it rather than from a copy).
func newRequest(name string, raw []byte) request {
	countStep(stepDecode)
	args, r := parseArgs(raw)
	if r != nil {
		countStep(stepCanonicalize)
		return request{name: policy.CanonicalTool(name), refusal: r}
	}
	countStep(stepCanonicalize)
	canonical, clean, r := authz.SanitizeOwned(name, args)
	if r != nil {
		return request{name: canonical, refusal: r}
	}
	if r := authz.NormalizeTarget(clean); r != nil {
		return request{name: canonical, refusal: r}
	}
	return request{name: canonical, args: clean}
}

// authorize runs stages 3–7 of the pipeline of docs/security.md for one call and returns
// what the handler will see. Any refusal means nothing ran.
//
// Preconditions: req came from newRequest (stages 1 and 2: the arguments decoded once and
// sanitized, the name canonical), and the caller checked the session state once for this
// call (s.check, stage 3); the session's authority comes from the channel (s), never from
// the request.
//
//	4–7. resolve the target once, then hard invariants, policy, classification and mode
//	   (authz.Pipeline.Decide), asking the host for consent when standard mode needs it;
//	8. the caller invokes the handler with the call's deadline; the handler gets the
//	   decoded arguments and the resolved window on tool.Call.
func (a *authorizer) authorize(ctx context.Context, s *session, req request) (*tool.Call, *tool.Tool, *authz.Refusal) {
	// A tool the host left out of the session is not there at all: refused before its
	// arguments or its target are looked at.
	if r := s.tools.Refusal(req.name); r != nil {
		return nil, nil, r
	}
	if req.refusal != nil {
		return nil, nil, req.refusal
	}
	name, args := req.name, req.args
	e, _ := a.pipe.Inventory().Lookup(name)
	t, registered := s.w.reg.Lookup(name)
	res, decoded := a.res.resolve(ctx, s, name, e, t, args)
	now := a.now()
	d := a.pipe.Decide(ctx, s.authority, name, args, &res.Target, &s.grants, now)
	if d.Refusal != nil {
		return nil, nil, d.Refusal
	}
	if r := s.w.personRefusal(d.Entry); r != nil {
		return nil, nil, r
	}
	if d.Entry.Shape == authz.ShapeKeyboard && s.w.consentOpen() && a.res.focusProtected(ctx) {
		// The person is being asked on the display and the question has the focus: keys
		// must not land in it, nor activation move the focus away from it.
		return nil, nil, authz.Refuse(authz.CodeInputBusy, "a consent question has the keyboard focus; keyboard input waits for the person's answer (call again once it is answered)")
	}
	if r := s.useLabel(name, args); r != nil {
		return nil, nil, r
	}
	if !registered {
		return nil, nil, authz.Refuse(authz.CodeUnsupported, "tool %q is not available in this worker", name)
	}
	if d.NeedsConsent {
		if r := s.obtainConsent(ctx, name, d.Resource); r != nil {
			return nil, nil, r
		}
	}
	for _, also := range d.AlsoConsent {
		if r := s.obtainConsent(ctx, name, also); r != nil {
			return nil, nil, r
		}
	}
	if d.NeedsConsent || len(d.AlsoConsent) > 0 {
		// The person may have stepped in while the question was open.
		if r := s.w.personRefusal(d.Entry); r != nil {
			return nil, nil, r
		}
	}
	if res.pinWindow != 0 {
		decoded.pin(res.pinPID, res.pinWindow)
	}
	// The handler reads the struct decoded above (tool.Call.Args); a handler that wants
	// the JSON encodes it then (tool.Call.RawArgs), not every call.
	readable := authz.Permits(s.authority, d.Entry, authz.Resource{Kind: authz.ResourceClipboard, Op: authz.OpObserve}, &s.grants, now)
	c := newCall(&res)
	c.Name, c.Arguments, c.Session, c.ClipboardReadable, c.Protected = name, args, s.state, readable, a.protected
	c.Args, c.ArgsErr, c.Pinned = decoded.typed, decoded.err, res.pinWindow != 0
	if decoded.err != nil {
		c.Args = nil
	}
	c.Files = res.files
	if r := d.Resource; r.Kind == authz.ResourceApplication && len(r.Argv) > 0 {
		c.Launch = &tool.Launch{Argv: r.Argv, DesktopID: r.DesktopID, Declared: r.Declared}
	}
	return c, t, nil
}

// newCall returns a tool.Call whose Window is the window res resolved (nil when none) and
// whose AtPoints is what lay at its points; the call, its window and those are one
// allocation.
func newCall(res *resolution) *tool.Call {
	if !res.hasWin {
		return &tool.Call{}
	}
	cw := &struct {
		call tool.Call
		win  x11.Window
		at   tool.AtPoints
	}{win: res.win, at: res.at}
	cw.call.Window = &cw.win
	if len(res.at.Tops) > 0 {
		cw.call.AtPoints = &cw.at
	}
	return &cw.call
}

// A pipeline step that runs once per call; tests count them (stepCounter).
const (
	stepDecode       = iota // the arguments decoded from JSON
	stepCanonicalize        // the tool name canonicalized
	stepSessionCheck        // the session's state checked
	numSteps
)

// stepCounter, when a test sets it, counts the pipeline's per-call steps. Nil in
// production.
var stepCounter atomic.Pointer[[numSteps]atomic.Int64]

func countStep(step int) {
	if c := stepCounter.Load(); c != nil {
		c[step].Add(1)
	}
}

// parseArgs decodes a call's arguments, which must be one JSON object.
func parseArgs(raw []byte) (map[string]any, *authz.Refusal) {
	// Absent and null arguments are the empty object (MCP clients send both).
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "{}" || string(t) == "null" {
		return map[string]any{}, nil
	}
	// The plain objects calls carry decode without reflection, to the same values;
	// anything else (and every error message) is encoding/json's.
	if m, ok := jsonobj.Decode(raw); ok {
		return m, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil { // trailing data is an error too
		return nil, authz.Refuse(authz.CodeInvalidArguments, "arguments are not valid JSON: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, authz.Refuse(authz.CodeInvalidArguments, "arguments must be a JSON object")
	}
	return m, nil
}

// listTools answers ListTools for session s: the tools it may call (the host's selection,
// then the policy and mode), with the inventory's annotations.
func (w *worker) listTools(s *session) *cuav1.ToolList {
	out := &cuav1.ToolList{}
	for _, t := range w.reg.Tools() {
		if !s.tools.Enabled(t.Name) {
			continue
		}
		e, ok := w.authorizer.pipe.Listed(s.ctx, s.authority, t.Name)
		if !ok {
			continue
		}
		ann, _ := json.Marshal(e.Annotations)
		out.Tools = append(out.Tools, &cuav1.ToolInfo{
			Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Annotations: ann, OutputSchema: t.OutputSchema,
		})
	}
	return out
}
