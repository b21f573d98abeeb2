package authz

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cua-host/cua-host/policy"
)

// Class is a tool's reviewed risk class. The zero value is invalid: a tool without a class
// is unclassified and denied.
type Class int

// Risk classes, from the reference system's table.
const (
	// R0 reads nothing private and changes nothing (sizes, the session's own state).
	R0 Class = iota + 1
	// R1 acts: input, launching, window management, clipboard writes.
	R1
	// R2 observes private state: window lists, regions of windows, the clipboard,
	// accessibility trees.
	R2
	// R3 observes whole windows or the whole display, or destroys (terminates processes).
	R3
)

// String returns "R0" … "R3".
func (c Class) String() string {
	if c >= R0 && c <= R3 {
		return fmt.Sprintf("R%d", int(c-R0))
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// MarshalText implements encoding.TextMarshaler.
func (c Class) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// State says whether a classified tool is exposed and how it is enforced.
type State int

// Inventory states.
const (
	// StateActive: exposed, and its resource checks (ownership, consent, manifest
	// resources) are enforced at the dispatch point.
	StateActive State = iota + 1
	// StateMetadataOnly: exposed; it touches no protected resource, so only the
	// tool-level checks apply (session state, policy, the manifest's tool lists).
	StateMetadataOnly
	// StateNotExposed: classified for reference, never registered; a call is refused.
	StateNotExposed
)

var stateNames = [...]string{StateActive: "active", StateMetadataOnly: "metadata_only", StateNotExposed: "not_exposed"}

// String returns the state's name.
func (s State) String() string { return enumName(stateNames[:], int(s), "State") }

// MarshalText implements encoding.TextMarshaler.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ResourceKind is the kind of resource a tool touches.
type ResourceKind int

// Resource kinds.
const (
	// ResourceNone: nothing outside the worker and the calling session.
	ResourceNone ResourceKind = iota + 1
	// ResourceSession: the calling session itself.
	ResourceSession
	// ResourceWindowList: the list of windows and applications (titles, pids, frames).
	ResourceWindowList
	// ResourceWindow: one window of one process (pid + window id); pointer tools with
	// scope "desktop" touch the display instead.
	ResourceWindow
	// ResourceDisplay: the whole display (screen contents, desktop coordinates).
	ResourceDisplay
	// ResourceProcess: one process, by pid.
	ResourceProcess
	// ResourceClipboard: the CLIPBOARD selection.
	ResourceClipboard
	// ResourceApplication: an executable to start.
	ResourceApplication
	// ResourceFile: one file a call reads or writes (a screenshot_out_file, an image_path);
	// never a tool's own resource, only one of a call's further resources (Target.Also).
	ResourceFile
)

var resourceNames = [...]string{
	ResourceNone: "none", ResourceSession: "session", ResourceWindowList: "window_list", ResourceWindow: "window",
	ResourceDisplay: "display", ResourceProcess: "process", ResourceClipboard: "clipboard", ResourceApplication: "application", ResourceFile: "file",
}

// String returns the kind's name.
func (k ResourceKind) String() string { return enumName(resourceNames[:], int(k), "ResourceKind") }

// MarshalText implements encoding.TextMarshaler.
func (k ResourceKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Operation is an operation class; consent grants are scoped to one.
type Operation int

// Operation classes.
const (
	// OpNone: the tool performs no operation on a protected resource.
	OpNone Operation = iota + 1
	// OpObserve reads: screenshots, window contents, accessibility trees, the clipboard.
	OpObserve
	// OpInput acts: pointer and keyboard input, window management, clipboard writes.
	OpInput
	// OpTerminate stops a process.
	OpTerminate
	// OpLaunch starts a process.
	OpLaunch
	// OpRead reads a file (ResourceFile).
	OpRead
	// OpWrite creates or replaces a file (ResourceFile).
	OpWrite
)

var operationNames = [...]string{OpNone: "none", OpObserve: "observe", OpInput: "input", OpTerminate: "terminate", OpLaunch: "launch", OpRead: "read", OpWrite: "write"}

// String returns the operation's name as ConsentRequest.operation spells it.
func (o Operation) String() string { return enumName(operationNames[:], int(o), "Operation") }

// MarshalText implements encoding.TextMarshaler.
func (o Operation) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Shape says how a tool's arguments name its resource; the worker resolves the concrete
// resource from them before deciding.
type Shape int

// Argument shapes.
const (
	// ShapeNone: the arguments name no resource.
	ShapeNone Shape = iota + 1
	// ShapeWindow: pid, optionally window_id (else the process's top-most window).
	ShapeWindow
	// ShapePointer: pid + window_id with window-relative points, or scope "desktop" with
	// desktop points; every point is checked for protected windows.
	ShapePointer
	// ShapeKeyboard: pid + window_id, or nothing (the focused window).
	ShapeKeyboard
	// ShapeProcess: pid.
	ShapeProcess
	// ShapeDisplay: the whole display.
	ShapeDisplay
	// ShapeExecutable: name or launch_path.
	ShapeExecutable
	// ShapeClipboard: the clipboard.
	ShapeClipboard
)

var shapeNames = [...]string{
	ShapeNone: "none", ShapeWindow: "pid+window_id", ShapePointer: "pid+window_id+points | scope:desktop+points",
	ShapeKeyboard: "pid+window_id | focused window", ShapeProcess: "pid", ShapeDisplay: "display",
	ShapeExecutable: "name | launch_path", ShapeClipboard: "clipboard",
}

// String describes the shape.
func (s Shape) String() string { return enumName(shapeNames[:], int(s), "Shape") }

// MarshalText implements encoding.TextMarshaler.
func (s Shape) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Behavior is what a mode does with a tool.
type Behavior int

// Behaviours per mode.
const (
	// Allow: no further check at the mode stage.
	Allow Behavior = iota + 1
	// RequireGrant: resources the session did not launch (and the display and the
	// clipboard, which no session owns) need a consent grant from the host's provider.
	RequireGrant
	// ManifestScoped: the session's manifest must list the tool and cover the resource.
	ManifestScoped
	// Deny: always refused.
	Deny
)

var behaviorNames = [...]string{Allow: "allow", RequireGrant: "require_grant", ManifestScoped: "manifest", Deny: "deny"}

// String returns the behaviour's name.
func (b Behavior) String() string { return enumName(behaviorNames[:], int(b), "Behavior") }

// MarshalText implements encoding.TextMarshaler.
func (b Behavior) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

func enumName(names []string, v int, typ string) string {
	if v > 0 && v < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, v)
}

// Annotations are the MCP tool annotations: hints for clients, never authorization.
type Annotations struct {
	ReadOnly    bool `json:"readOnlyHint"`
	Destructive bool `json:"destructiveHint"`
	Idempotent  bool `json:"idempotentHint"`
	OpenWorld   bool `json:"openWorldHint"`
}

// Entry is one tool's reviewed classification.
type Entry struct {
	// Tool is the canonical tool name.
	Tool string `json:"tool"`
	// Summary says in a few words what the tool does.
	Summary string `json:"summary"`
	// Class is the risk class.
	Class Class `json:"risk_class"`
	// Resource is the kind of resource the tool touches, and Operation what it does to it.
	Resource  ResourceKind `json:"resource"`
	Operation Operation    `json:"operation"`
	// Shape says which arguments name the resource.
	Shape Shape `json:"arguments"`
	// Annotations are the MCP annotations tools/list reports.
	Annotations Annotations `json:"annotations"`
	// State says whether the tool is exposed.
	State State `json:"state"`
	// Standard, Bounded and Unrestricted are the behaviour in each mode.
	Standard     Behavior `json:"standard"`
	Bounded      Behavior `json:"bounded"`
	Unrestricted Behavior `json:"unrestricted"`
	// Refusal is the code the mode stage refuses with most often for this tool.
	Refusal Code `json:"refusal_code"`
}

// Behavior returns the entry's behaviour in mode m (Deny for an invalid mode).
func (e *Entry) Behavior(m Mode) Behavior {
	switch m {
	case Standard:
		return e.Standard
	case Bounded:
		return e.Bounded
	case Unrestricted:
		return e.Unrestricted
	}
	return Deny
}

// Exposed reports whether the tool may be registered and called.
func (e *Entry) Exposed() bool { return e.State == StateActive || e.State == StateMetadataOnly }

// validate checks one entry for coherence: every field set, the modes consistent with the
// state, and unrestricted never stricter-than-allow except for a denied tool.
func (e *Entry) validate() error {
	switch {
	case e.Tool == "" || policy.CanonicalTool(e.Tool) != e.Tool:
		return fmt.Errorf("entry %q: tool name must be canonical and non-empty", e.Tool)
	case e.Class < R0 || e.Class > R3:
		return fmt.Errorf("entry %q: invalid risk class", e.Tool)
	case e.State < StateActive || e.State > StateNotExposed:
		return fmt.Errorf("entry %q: invalid state", e.Tool)
	case e.Resource < ResourceNone || e.Resource > ResourceApplication: // never ResourceFile
		return fmt.Errorf("entry %q: invalid resource kind", e.Tool)
	case e.Operation < OpNone || e.Operation > OpLaunch: // file operations belong to no tool
		return fmt.Errorf("entry %q: invalid operation", e.Tool)
	case e.Shape < ShapeNone || e.Shape > ShapeClipboard:
		return fmt.Errorf("entry %q: invalid argument shape", e.Tool)
	case e.Refusal == "":
		return fmt.Errorf("entry %q: no refusal code", e.Tool)
	}
	for _, b := range []Behavior{e.Standard, e.Bounded, e.Unrestricted} {
		if b < Allow || b > Deny {
			return fmt.Errorf("entry %q: invalid behaviour", e.Tool)
		}
	}
	if e.State == StateNotExposed {
		if e.Standard != Deny || e.Bounded != Deny || e.Unrestricted != Deny {
			return fmt.Errorf("entry %q: a not_exposed tool is denied in every mode", e.Tool)
		}
		return nil
	}
	if e.Bounded != ManifestScoped {
		return fmt.Errorf("entry %q: an exposed tool is manifest-scoped in bounded mode", e.Tool)
	}
	if e.Unrestricted != Allow || e.Standard == ManifestScoped || e.Standard == Deny {
		return fmt.Errorf("entry %q: an exposed tool is allowed in unrestricted mode and allowed or granted in standard mode", e.Tool)
	}
	if e.State == StateMetadataOnly && (e.Standard != Allow || e.Operation != OpNone) {
		return fmt.Errorf("entry %q: a metadata_only tool performs no operation and needs no grant", e.Tool)
	}
	return nil
}

// Inventory is the reviewed classification of every tool a worker may register. It is
// immutable and safe for concurrent use.
type Inventory struct {
	entries map[string]*Entry
	order   []string
}

// NewInventory returns an inventory of entries, in the given order. It reports an invalid
// or duplicate entry.
func NewInventory(entries ...Entry) (*Inventory, error) {
	inv := &Inventory{entries: make(map[string]*Entry, len(entries))}
	return inv.add(entries)
}

func (inv *Inventory) add(entries []Entry) (*Inventory, error) {
	for i := range entries {
		e := entries[i]
		if err := e.validate(); err != nil {
			return nil, fmt.Errorf("inventory: %w", err)
		}
		if _, dup := inv.entries[e.Tool]; dup {
			return nil, fmt.Errorf("inventory: duplicate entry %q", e.Tool)
		}
		inv.entries[e.Tool] = &e
		inv.order = append(inv.order, e.Tool)
	}
	return inv, nil
}

// With returns a new inventory holding inv's entries followed by extra. The worker uses it
// for test-only tools; the shipped inventory is never changed.
func (inv *Inventory) With(extra ...Entry) (*Inventory, error) {
	out := &Inventory{entries: make(map[string]*Entry, len(inv.entries)+len(extra)), order: slices.Clone(inv.order)}
	for k, v := range inv.entries {
		out.entries[k] = v
	}
	return out.add(extra)
}

// Lookup returns the entry of a canonical tool name.
func (inv *Inventory) Lookup(tool string) (*Entry, bool) {
	e, ok := inv.entries[tool]
	return e, ok
}

// Entries returns a copy of every entry, in table order.
func (inv *Inventory) Entries() []Entry {
	out := make([]Entry, 0, len(inv.order))
	for _, n := range inv.order {
		out = append(out, *inv.entries[n])
	}
	return out
}

// Classify returns the entry a call of tool may run under, or the refusal: an unknown tool
// is unclassified_tool, a not_exposed one unsupported.
func (inv *Inventory) Classify(tool string) (*Entry, *Refusal) {
	e, ok := inv.entries[tool]
	if !ok {
		return nil, Refuse(CodeUnclassifiedTool, "tool %q has no reviewed risk classification", tool)
	}
	if !e.Exposed() {
		return nil, Refuse(CodeUnsupported, "tool %q is not exposed by cua-host", tool)
	}
	return e, nil
}

// MarshalJSON encodes the inventory as a JSON array of entries in table order.
func (inv *Inventory) MarshalJSON() ([]byte, error) { return json.Marshal(inv.Entries()) }
