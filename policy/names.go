package policy

import (
	"sort"
	"strings"
)

// aliases maps accepted alternative tool names to their canonical names.
// Read-only.
var aliases = map[string]string{
	"type_text_chars": "type_text",
}

// CanonicalTool returns the canonical name of a tool: "type_text" for the
// alias "type_text_chars", the name itself otherwise. Policy files may name
// a tool by its alias; the authorization pipeline canonicalizes a call's
// name once (authz.Sanitize) before it decides.
func CanonicalTool(tool string) string {
	if c, ok := aliases[tool]; ok {
		return c
	}
	return tool
}

// Aliases returns the accepted alternative names of tool, sorted (none for most tools).
func Aliases(tool string) []string {
	var out []string
	for a, c := range aliases {
		if c == tool {
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out
}

// Reserved reports whether an argument key is reserved: every top-level key
// that starts with "_". The authorization pipeline drops reserved arguments
// before it decides (authz.Sanitize), so nothing a caller puts there can
// select or widen authority; Decide ignores them too, and a policy file may
// not constrain them.
func Reserved(key string) bool { return strings.HasPrefix(key, "_") }

// AliasNames returns every accepted alternative tool name, sorted: the aliases are
// declared here and nowhere else (the MCP proxy's unlisted names are checked against
// them).
func AliasNames() []string {
	out := make([]string, 0, len(aliases))
	for a := range aliases {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}
