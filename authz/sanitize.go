package authz

import "github.com/cua-host/cua-host/policy"

// Sanitize is stage 2 of the pipeline, run once per call before anything decides on it:
// it returns the canonical tool name ("type_text" for the alias "type_text_chars") and a
// copy of args without the reserved (underscore-prefixed) top-level keys, so nothing a
// caller puts there can select or widen authority. The name rules are the policy
// language's (policy.CanonicalTool, policy.Reserved): policy files are written in them.
// Sanitize never modifies args; nested values are shared with args, not copied. The
// result is never nil. Sanitize is idempotent.
func Sanitize(tool string, args map[string]any) (canonicalTool string, clean map[string]any) {
	clean = make(map[string]any, len(args))
	for k, v := range args {
		if !policy.Reserved(k) {
			clean[k] = v
		}
	}
	return policy.CanonicalTool(tool), clean
}
