package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/internal/safefile"
	"github.com/cua-host/cua-host/x11"
)

// Handler runs one call of a tool. See the package comment for how its return maps to an
// outcome.
type Handler func(ctx context.Context, call *Call) (*Result, error)

// Annotations are the MCP tool annotations a client sees in tools/list.
type Annotations struct {
	ReadOnly    bool `json:"readOnlyHint"`
	Destructive bool `json:"destructiveHint"`
	Idempotent  bool `json:"idempotentHint"`
	OpenWorld   bool `json:"openWorldHint"`
}

// Tool is one registered tool.
type Tool struct {
	// Name is the tool's MCP name.
	Name string
	// Description is shown to the model.
	Description string
	// InputSchema is a JSON Schema object; nil means {"type":"object"}.
	InputSchema json.RawMessage
	// OutputSchema, when set, is a JSON Schema object that the structured value of every
	// successful result follows (tools/list declares it); nil declares none.
	OutputSchema json.RawMessage
	// Annotations are MCP hints, not authorization.
	Annotations Annotations
	// Quick marks a tool that returns within microseconds and never blocks on anything
	// but a bounded exchange with a local server. The worker runs a quick tool's calls on
	// the session's reader goroutine (no handoff); other calls get their own goroutine so
	// the session keeps reading (for Cancel) while they run.
	Quick bool
	// Touches is what a call touches beyond the inventory's shape: the window it pins,
	// whether it pastes, the files it names, the program it launches. It is declared here
	// and nowhere else; the authorizer resolves a call's resources from it.
	Touches Touches
	// Args, when set, returns a new zero argument struct of the tool (NewArgs): the worker
	// decodes each call's arguments once into it, reads the call's target from it
	// (Targeted, Pointed), pins the decided window into it (Pinned), and hands the same
	// value to the handler (Call.Args, ArgsOf). Nil: the handler decodes them itself
	// (Call.Decode) and the target is read by the generic names.
	Args func() any
	// Handler runs the tool.
	Handler Handler
}

// Call is one invocation as a handler sees it.
type Call struct {
	// Name is the canonical tool name.
	Name string
	// JSON is the JSON object of arguments of a call made without the worker's
	// authorizer (tests call handlers directly). The authorizer leaves it nil and sets
	// Arguments: RawArgs encodes them when a handler wants the JSON.
	JSON json.RawMessage
	// Args is the call's arguments decoded once by the worker into the struct its tool
	// declares (Tool.Args), with any pinned window written in: the value the target was
	// resolved and decided on. Handlers read it through ArgsOf, never decode again. Nil
	// when the tool declares no struct, when the arguments do not decode (ArgsErr) or
	// when a handler is called without the worker's authorizer.
	Args any
	// ArgsErr is why the arguments do not decode into the tool's struct: the refusal the
	// handler returns (ArgsOf) where it would have decoded them, so that a call refused
	// for its arguments is refused at the same point as before the decode moved here.
	ArgsErr error
	// Arguments is the object the authorizer decoded once and decided on, sanitized: what
	// the policy saw. A window the authorizer pinned (Pinned) is not in it. Handlers never
	// modify it; RunArguments is the object the call runs with. Nil when a handler is
	// called without the worker's authorizer.
	Arguments map[string]any
	// Pinned is true when the authorizer chose Window for a call that named no window (a
	// pid alone, or keyboard input to the focused window) of a tool that declares
	// Touches.Window: the struct the handler reads (Args) names that window, and so does
	// RunArguments, the object the journal records.
	Pinned bool
	// Window is the window the authorizer resolved for this call and decided on (the
	// X server's owner, its frame, its title), or nil when the call targets none or a
	// handler is called without the worker's authorizer. A handler acts on it without
	// looking the window up again; it still re-checks what lies under its input right
	// before sending it.
	Window *x11.Window
	// Session is the calling session's state.
	Session *Session
	// ClipboardReadable is true when the session may read the clipboard in this call
	// without asking anyone: its mode and manifest allow it, or it holds a clipboard grant.
	// A handler that finds its action would paste (an element named "Paste") refuses
	// unless this is set or the session owns what would be pasted.
	ClipboardReadable bool
	// Protected reports whether pid is a process no call may target or observe: cua-host
	// itself, the person's consent UI, the display's own processes. Nil protects nothing
	// beyond what the authorizer already refused.
	Protected func(pid int) bool
	// Launch is, for launch_app, the program the authorizer decided on: the handler runs
	// exactly it. Nil for other tools and when a handler is called without the worker's
	// authorizer.
	Launch *Launch
	// Files are the files the call's path arguments name, as the authorizer decided on
	// them (File finds one by argument). Nil when the call names none or a handler is
	// called without the worker's authorizer.
	Files []File
	// AtPoints is what lay at the call's points when the authorizer decided it. Nil when
	// it did not ask, and when a handler is called without the worker's authorizer.
	AtPoints *AtPoints
}

// AtPoints is what the X server said lay at a call's points (root coordinates) while the
// authorizer decided the call: Tops[i] is the top-level window that received pointer
// events at Points[i] then (x11.Backend.TopLevelsAt). It is older than anything the
// handler reads: a check that only refuses early may take it, but the check right before
// input asks the server again.
type AtPoints struct {
	Points []x11.Point
	Tops   []x11.TopLevel
}

// For returns the windows at pts when they are exactly the points read, in order, else nil.
func (a *AtPoints) For(pts []x11.Point) []x11.TopLevel {
	if a == nil || len(a.Tops) != len(a.Points) || !slices.Equal(a.Points, pts) {
		return nil
	}
	return a.Tops
}

// File is a file a call reads or writes, as the authorizer decided on it.
type File struct {
	// Arg is the argument that names the file.
	Arg string
	// Path is the canonical path the decision was made on; Arguments holds it too.
	Path string
	// Dir is the identity of Path's directory as the authorizer found it when it opened
	// the directory without following symbolic links. A handler opens the directory the
	// same way and reads or writes the file in it only while it is still this directory:
	// a directory swapped for another, or for a link, since the decision is refused.
	Dir safefile.ID
}

// File returns the decided file that argument arg names, or nil when there is none.
func (c *Call) File(arg string) *File {
	for i := range c.Files {
		if c.Files[i].Arg == arg {
			return &c.Files[i]
		}
	}
	return nil
}

// Launch is the exact program a launch_app call was authorized to run.
type Launch struct {
	// Argv is the command line; Argv[0] is the absolute path executed.
	Argv []string
	// DesktopID is the desktop entry it runs, or "".
	DesktopID string
	// Declared is true for a desktop application the system declares (see
	// authz.Resource.Declared).
	Declared bool
}

// Decode fills v, a pointer to a handler's argument struct, from the call's arguments,
// rejecting unknown fields: for a tool that declares no argument struct (Tool.Args). When
// the authorizer decoded them (Arguments), Decode reads that object and parses no JSON: the
// result is what encoding/json's strict decode of JSON (the object's encoding) would give,
// field for field and refusal for refusal (see decode.go). Without Arguments, or for a
// struct type decode.go does not handle, it decodes JSON. It panics when the worker
// already decoded the call into the tool's declared struct (Args or ArgsErr set): that
// handler reads ArgsOf, and a second decode would be a second reading of the call.
func (c *Call) Decode(v any) error {
	if c.Args != nil || c.ArgsErr != nil {
		panic(fmt.Sprintf("tool: %s decodes arguments the worker already decoded into %T; read them with ArgsOf", c.Name, c.Args))
	}
	return c.decodeInto(v)
}

// decodeInto is Decode without its guard.
func (c *Call) decodeInto(v any) error {
	if _, open := v.(Open); open {
		return c.decodeOpen(v)
	}
	return c.decodeStrict(v)
}

// decodeOpen decodes into v, an Open struct, the arguments it names: the others are
// dropped first, and what is left is decoded strictly.
func (c *Call) decodeOpen(v any) error {
	args := c.RunArguments()
	if args == nil {
		if err := DecodeArgs(c.JSON, &args); err != nil {
			return err
		}
	}
	names := map[string]bool{}
	if t := structType(v); t != nil {
		collectNames(t, names)
	}
	kept := make(map[string]any, len(names))
	for k, x := range args {
		if names[k] {
			kept[k] = x
		}
	}
	named := Call{Name: c.Name, Arguments: kept}
	return named.decodeStrict(v)
}

// decodeStrict fills v from the call's arguments (RunArguments), refusing any argument v
// does not name.
func (c *Call) decodeStrict(v any) error {
	if args := c.RunArguments(); args != nil {
		if done, err := decodeObject(args, v); done {
			return err
		}
		raw, err := encodeArguments(args)
		if err != nil {
			return err
		}
		countParse()
		return decodeArgs(raw, keysOf(args), v)
	}
	countParse()
	return DecodeArgs(c.JSON, v)
}

// RunArguments returns the object the call runs with: Arguments, with the pid and
// window_id of the pinned window written into a copy when the authorizer pinned one
// (Pinned). Nil when a handler is called without the worker's authorizer.
func (c *Call) RunArguments() map[string]any {
	if !c.Pinned || c.Window == nil || c.Arguments == nil {
		return c.Arguments
	}
	out := make(map[string]any, len(c.Arguments)+2)
	for k, v := range c.Arguments {
		out[k] = v
	}
	out["pid"], out["window_id"] = float64(c.Window.PID), float64(c.Window.ID)
	return out
}

// RawArgs returns the call's arguments as one JSON object: JSON when set, else the
// encoding of RunArguments (numbers as the policy saw them, a pinned window included),
// "{}" for none.
func (c *Call) RawArgs() (json.RawMessage, error) {
	if len(c.JSON) > 0 {
		return c.JSON, nil
	}
	return encodeArguments(c.RunArguments())
}

// encodeArguments encodes a decoded arguments object ("{}" for none).
func encodeArguments(args map[string]any) (json.RawMessage, error) {
	if len(args) == 0 {
		return json.RawMessage("{}"), nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, authz.Refuse(authz.CodeInvalidArguments, "encode arguments: %v", err)
	}
	return b, nil
}

// parseCounter, when a test sets it (CountParses), counts the calls whose arguments Decode
// parsed from JSON. Nil in production.
var parseCounter atomic.Pointer[atomic.Int64]

func countParse() {
	if n := parseCounter.Load(); n != nil {
		n.Add(1)
	}
}

// CountParses makes every later Decode that parses a call's arguments from JSON add one to
// n, until stop is called. It is for tests that count the work of a call; tests using it
// must not run in parallel with each other.
func CountParses(n *atomic.Int64) (stop func()) {
	parseCounter.Store(n)
	return func() { parseCounter.Store(nil) }
}

// Session is the per-session state handlers may read and record into. Its label is public
// and carries no authority.
type Session struct {
	// Label is the session's public label.
	Label string
	// Mode is the session's permission mode name.
	Mode string
	// OwnsDisplay is true when the display is the session's own (a private display the
	// host created for it): no person shares it, so foreground input disturbs no one.
	OwnsDisplay bool
	// LaunchRootOf, when set, maps a process to the worker's child it is or descends
	// from (0 for none): the process a launch started, for the windows of a program that
	// runs below it (in a sandbox, or as an app's helper). Set before the session is used.
	LaunchRootOf func(pid int) int

	// mu guards the fields below.
	mu sync.Mutex
	// launched maps each process the session launched (a child of the worker) to the
	// program's own process (itself, or one inside the sandbox it started).
	launched map[int]int
	ended    bool
	onEnd    []func()
}

// NewSession returns the state of a session with the given label and mode name.
func NewSession(label, mode string) *Session {
	return &Session{Label: label, Mode: mode, launched: map[int]int{}}
}

// OnEnd registers f to run once when the session ends (End), or at once when it already
// has: per-session resources (its input devices) are released there.
func (s *Session) OnEnd(f func()) {
	s.mu.Lock()
	if !s.ended {
		s.onEnd = append(s.onEnd, f)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	f()
}

// End marks the session ended and runs the functions registered with OnEnd, newest first.
// Later calls do nothing.
func (s *Session) End() {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	fs := s.onEnd
	s.onEnd = nil
	s.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// RecordLaunch notes that this session launched process pid.
func (s *Session) RecordLaunch(pid int) { s.RecordLaunchOf(pid, pid) }

// RecordLaunchOf notes that this session launched process root, the worker's child, to
// run the program whose process is program (the same process, or one inside a sandbox
// root started).
func (s *Session) RecordLaunchOf(root, program int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.launched[root] = program
}

// Launched reports whether this session launched process pid (a root of RecordLaunchOf).
func (s *Session) Launched(pid int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.launched[pid]
	return ok
}

// LaunchRoot returns the process this session launched that pid is or descends from, or
// 0 when pid is no process of the session's.
func (s *Session) LaunchRoot(pid int) int {
	if s.LaunchRootOf != nil {
		if root := s.LaunchRootOf(pid); root != 0 && s.Launched(root) {
			return root
		}
	}
	if s.Launched(pid) {
		return pid
	}
	return 0
}

// LaunchedPIDs lists the programs this session launched (their own processes, inside a
// sandbox or not), in increasing order.
func (s *Session) LaunchedPIDs() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	pids := make([]int, 0, len(s.launched))
	for _, program := range s.launched {
		pids = append(pids, program)
	}
	sort.Ints(pids)
	return pids
}

// Registry holds the worker's tools and the hooks that release held input. Register tools
// before the worker serves; afterwards the registry is read-only and safe for concurrent use.
type Registry struct {
	tools     map[string]*Tool
	order     []string
	releasers []func(context.Context)
	caps      []Capability
}

// Capability is one backend's availability, reported in Ready and by health_report.
type Capability struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
	Detail    string `json:"detail,omitempty"`
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{tools: map[string]*Tool{}}
}

// Register adds t. It panics on a programmer error: an empty name, a nil handler, a
// duplicate name, an input schema that is not a JSON object, or declared facts
// (Touches.Pastes, Touches.Launch) that read another struct than the tool's Args.
func (r *Registry) Register(t Tool) {
	if t.Name == "" {
		panic("tool: Register with empty name")
	}
	if t.Handler == nil {
		panic(fmt.Sprintf("tool: Register %q with nil handler", t.Name))
	}
	if _, dup := r.tools[t.Name]; dup {
		panic(fmt.Sprintf("tool: duplicate tool %q", t.Name))
	}
	if t.InputSchema == nil {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	var probe map[string]any
	if err := json.Unmarshal(t.InputSchema, &probe); err != nil {
		panic(fmt.Sprintf("tool: %q input schema is not a JSON object: %v", t.Name, err))
	}
	checkDeclared(&t)
	r.tools[t.Name] = &t
	r.order = append(r.order, t.Name)
}

// Lookup returns the tool named name.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	t, ok := r.tools[name]
	return t, ok
}

// Tools returns every tool in registration order.
func (r *Registry) Tools() []*Tool {
	out := make([]*Tool, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.tools[n])
	}
	return out
}

// OnRelease adds a hook that releases anything a backend holds (pressed buttons and keys,
// remapped keycodes). The worker runs every hook when a session is revoked and before it
// exits.
func (r *Registry) OnRelease(f func(context.Context)) {
	if f == nil {
		panic("tool: OnRelease(nil)")
	}
	r.releasers = append(r.releasers, f)
}

// Release runs every release hook.
func (r *Registry) Release(ctx context.Context) {
	for _, f := range r.releasers {
		f(ctx)
	}
}

// AddCapability records a backend's availability.
func (r *Registry) AddCapability(c Capability) {
	r.caps = append(r.caps, c)
}

// Capabilities returns what AddCapability recorded, in order.
func (r *Registry) Capabilities() []Capability {
	return append([]Capability(nil), r.caps...)
}
