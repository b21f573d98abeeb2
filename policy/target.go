package policy

import "strconv"

// Target is the resource a call touches as the authorization pipeline resolved it from the
// desktop and /proc, not from the call's arguments. A policy that means "never touch the
// user's terminal" must decide on it: a call can name no pid at all and still reach a
// window (keyboard input goes to the focused window).
type Target struct {
	// Kind is the resource kind: "window", "process", "display", "clipboard" or
	// "application".
	Kind string
	// PID is the owning process (windows) or the process itself; 0 when none.
	PID int
	// WindowID is the X window id; 0 when the call touches no single window.
	WindowID uint32
	// Executable is the canonical path of PID's executable, or the program a launch
	// starts; "" when unknown.
	Executable string
	// Owner is "session" when the calling session launched PID, "foreign" for any other
	// process, and "" when the target has no process.
	Owner string
}

// Owners of a Target.
const (
	OwnerSession = "session"
	OwnerForeign = "foreign"
)

// targetFields are the names a YAML constraint may give as "target.NAME".
var targetFields = []string{"kind", "pid", "window_id", "executable", "owner"}

// fields returns the target as JSON-compatible values keyed by field name, leaving out
// what is unset. A nil target has no fields.
func (t *Target) fields() map[string]any {
	if t == nil {
		return nil
	}
	m := make(map[string]any, len(targetFields))
	for _, name := range targetFields {
		if v, ok := t.field(name); ok {
			m[name] = v
		}
	}
	return m
}

// field returns one of the fields, as fields has it (false when unset or unknown). A nil
// target has no fields.
func (t *Target) field(name string) (any, bool) {
	if t == nil {
		return nil, false
	}
	switch name {
	case "kind":
		return t.Kind, t.Kind != ""
	case "pid":
		return float64(t.PID), t.PID > 0
	case "window_id":
		return float64(t.WindowID), t.WindowID != 0
	case "executable":
		return t.Executable, t.Executable != ""
	case "owner":
		return t.Owner, t.Owner != ""
	}
	return nil, false
}

// String describes the target for messages: "window pid=12 id=0x400001".
func (t *Target) String() string {
	if t == nil || t.Kind == "" {
		return "none"
	}
	s := t.Kind
	if t.PID > 0 {
		s += " pid=" + strconv.Itoa(t.PID)
	}
	if t.WindowID != 0 {
		s += " id=0x" + strconv.FormatUint(uint64(t.WindowID), 16)
	}
	return s
}
