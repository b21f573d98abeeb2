package atspi

// StateSet is an AT-SPI state set: bit i is state i of the AtspiStateType enumeration,
// as GetState returns it (two 32-bit words, low word first).
type StateSet uint64

// States the walk and the actions look at. The numbers are the AtspiStateType values.
const (
	StateActive             StateSet = 1 << 1
	StateBusy               StateSet = 1 << 3
	StateChecked            StateSet = 1 << 4
	StateCollapsed          StateSet = 1 << 5
	StateDefunct            StateSet = 1 << 6
	StateEditable           StateSet = 1 << 7
	StateEnabled            StateSet = 1 << 8
	StateExpandable         StateSet = 1 << 9
	StateExpanded           StateSet = 1 << 10
	StateFocusable          StateSet = 1 << 11
	StateFocused            StateSet = 1 << 12
	StateIconified          StateSet = 1 << 15
	StateModal              StateSet = 1 << 16
	StateMultiLine          StateSet = 1 << 17
	StatePressed            StateSet = 1 << 20
	StateSelectable         StateSet = 1 << 22
	StateSelected           StateSet = 1 << 23
	StateSensitive          StateSet = 1 << 24
	StateShowing            StateSet = 1 << 25
	StateSingleLine         StateSet = 1 << 26
	StateVisible            StateSet = 1 << 30
	StateManagesDescendants StateSet = 1 << 31
	StateIndeterminate      StateSet = 1 << 32
	StateRequired           StateSet = 1 << 33
	StateInvalidEntry       StateSet = 1 << 36
	StateIsDefault          StateSet = 1 << 39
	StateVisited            StateSet = 1 << 40
	StateCheckable          StateSet = 1 << 41
	StateHasPopup           StateSet = 1 << 42
	StateReadOnly           StateSet = 1 << 43
)

// stateNames are the AtspiStateType names, indexed by value.
var stateNames = [...]string{
	"invalid", "active", "armed", "busy", "checked", "collapsed", "defunct", "editable",
	"enabled", "expandable", "expanded", "focusable", "focused", "has_tooltip", "horizontal",
	"iconified", "modal", "multi_line", "multiselectable", "opaque", "pressed", "resizable",
	"selectable", "selected", "sensitive", "showing", "single_line", "stale", "transient",
	"vertical", "visible", "manages_descendants", "indeterminate", "required", "truncated",
	"animated", "invalid_entry", "supports_autocompletion", "selectable_text", "is_default",
	"visited", "checkable", "has_popup", "read_only",
}

// reported are the states an agent is shown: the ones that change what an action does
// or what the element means. Layout states (showing, visible, opaque, …) are left out.
var reported = []struct {
	bit  StateSet
	name string
}{
	{StateFocused, "focused"}, {StateChecked, "checked"}, {StateIndeterminate, "mixed"},
	{StateSelected, "selected"}, {StatePressed, "pressed"}, {StateExpanded, "expanded"},
	{StateCollapsed, "collapsed"}, {StateIsDefault, "default"}, {StateModal, "modal"},
	{StateReadOnly, "read_only"}, {StateRequired, "required"}, {StateInvalidEntry, "invalid"},
	{StateBusy, "busy"}, {StateIconified, "minimized"}, {StateVisited, "visited"},
}

// stateSet builds a StateSet from GetState's words.
func stateSet(words []uint32) StateSet {
	var s StateSet
	if len(words) > 0 {
		s |= StateSet(words[0])
	}
	if len(words) > 1 {
		s |= StateSet(words[1]) << 32
	}
	return s
}

// Has reports whether every state in t is in s.
func (s StateSet) Has(t StateSet) bool { return s&t == t }

// Names lists every state in s by its AT-SPI name, in enumeration order.
func (s StateSet) Names() []string {
	var out []string
	for i, n := range stateNames {
		if s&(1<<uint(i)) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// Reported lists the states an agent is shown, plus "disabled" for an interactive
// element that is neither enabled nor sensitive.
func (s StateSet) Reported(interactive bool) []string {
	var out []string
	for _, r := range reported {
		if s&r.bit != 0 {
			out = append(out, r.name)
		}
	}
	if interactive && s&(StateEnabled|StateSensitive) == 0 {
		out = append(out, "disabled")
	}
	return out
}
