package policy

import "strings"

// aliases maps accepted alternative tool names to their canonical names.
// Read-only.
var aliases = map[string]string{
	"type_text_chars": "type_text",
}

// CanonicalTool returns the canonical name of a tool: "type_text" for the
// alias "type_text_chars", the name itself otherwise.
func CanonicalTool(tool string) string {
	if c, ok := aliases[tool]; ok {
		return c
	}
	return tool
}

// Reserved reports whether an argument key is reserved: every top-level key
// that starts with "_". Reserved arguments are dropped before authorization,
// so nothing a caller puts there can select or widen authority.
func Reserved(key string) bool { return strings.HasPrefix(key, "_") }

// Sanitize returns the canonical tool name and a copy of args without the
// reserved (underscore-prefixed) top-level keys. It never modifies args;
// nested values are shared with args, not copied. The result is never nil.
// Sanitize is idempotent.
func Sanitize(tool string, args map[string]any) (canonicalTool string, clean map[string]any) {
	clean = make(map[string]any, len(args))
	for k, v := range args {
		if !Reserved(k) {
			clean[k] = v
		}
	}
	return CanonicalTool(tool), clean
}
