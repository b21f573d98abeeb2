package authz

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cua-host/cua-host/policy"
)

// ToolSelection is an operator's choice of the tools a session serves, made when the
// session is created (`run --tools`/`--exclude-tools`, serve's create_session, the
// CreateSession frame): when Only is not empty, those tools and no other; never those in
// Exclude. It narrows what the mode, the policy and the manifest allow and never widens
// it. The zero value selects every tool. It is immutable once built.
type ToolSelection struct {
	only, exclude []string // canonical names, sorted, without duplicates
}

// SelectionError is a selection that names a tool it cannot hold. List is "tools" or
// "exclude_tools", the list the name came from; callers name it in their own spelling
// (a flag, a parameter).
type SelectionError struct {
	List   string
	Tool   string
	Reason string
}

// Error implements error.
func (e *SelectionError) Error() string { return e.List + ": " + e.Reason }

// NewToolSelection checks only and exclude against inv — every name must be an exposed
// tool of inv (aliases such as type_text_chars are taken as their canonical tool), and no
// tool may be in both lists — and returns the selection. Nothing is ignored: a name that
// is empty, unknown or not exposed is a *SelectionError saying which and why.
func NewToolSelection(only, exclude []string, inv *Inventory) (ToolSelection, error) {
	var s ToolSelection
	var err error
	if s.only, err = checkTools("tools", only, inv); err != nil {
		return ToolSelection{}, err
	}
	if s.exclude, err = checkTools("exclude_tools", exclude, inv); err != nil {
		return ToolSelection{}, err
	}
	for _, t := range s.exclude {
		if _, both := slices.BinarySearch(s.only, t); both {
			return ToolSelection{}, &SelectionError{List: "exclude_tools", Tool: t,
				Reason: fmt.Sprintf("tool %q is in both lists; name each tool in one", t)}
		}
	}
	return s, nil
}

// checkTools canonicalizes and checks one list.
func checkTools(list string, names []string, inv *Inventory) ([]string, error) {
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			return nil, &SelectionError{List: list, Reason: "an empty tool name (a stray comma?)"}
		}
		c := policy.CanonicalTool(n)
		e, ok := inv.Lookup(c)
		switch {
		case !ok:
			reason := fmt.Sprintf("unknown tool %q", n)
			if near := nearestTool(c, inv); near != "" {
				reason += fmt.Sprintf(" (did you mean %q?)", near)
			}
			return nil, &SelectionError{List: list, Tool: n, Reason: reason + "; `cua-host list-tools` lists the tools"}
		case !e.Exposed():
			return nil, &SelectionError{List: list, Tool: n, Reason: fmt.Sprintf("tool %q is classified but not one cua-host serves (%s)", n, e.Summary)}
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out, nil
}

// nearestTool returns the exposed tool of inv closest to name, when it is at most two
// edits away.
func nearestTool(name string, inv *Inventory) string {
	best, bestD := "", 3
	for _, e := range inv.Entries() {
		if !e.Exposed() {
			continue
		}
		if d := editDistance(name, e.Tool); d < bestD {
			best, bestD = e.Tool, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, byte-wise (tool names are
// ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// IsZero reports whether the selection selects every tool.
func (s ToolSelection) IsZero() bool { return len(s.only) == 0 && len(s.exclude) == 0 }

// Only returns the tools the selection is limited to (nil: no limit), sorted.
func (s ToolSelection) Only() []string { return slices.Clone(s.only) }

// Exclude returns the tools the selection leaves out, sorted.
func (s ToolSelection) Exclude() []string { return slices.Clone(s.exclude) }

// Enabled reports whether tool (a canonical name) is selected.
func (s ToolSelection) Enabled(tool string) bool {
	if _, out := slices.BinarySearch(s.exclude, tool); out {
		return false
	}
	if len(s.only) == 0 {
		return true
	}
	_, in := slices.BinarySearch(s.only, tool)
	return in
}

// Refusal returns nil when tool is selected, else the refusal of a call of it:
// permission_denied, the code of a tool the session's authority does not include (the
// reference driver has no code of its own for a tool left out at startup).
func (s ToolSelection) Refusal(tool string) *Refusal {
	if s.Enabled(tool) {
		return nil
	}
	return Refuse(CodePermissionDenied, "tool %q is not enabled in this session: the host serves only the tools it selected (tools/list lists them)", tool)
}

// String describes the selection for logs: "all", "only a,b", "all but c", or both.
func (s ToolSelection) String() string {
	switch {
	case s.IsZero():
		return "all"
	case len(s.only) > 0 && len(s.exclude) > 0:
		return "only " + strings.Join(s.only, ",") + " but " + strings.Join(s.exclude, ",")
	case len(s.only) > 0:
		return "only " + strings.Join(s.only, ",")
	}
	return "all but " + strings.Join(s.exclude, ",")
}
