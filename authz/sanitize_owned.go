package authz

import "github.com/cua-host/cua-host/policy"

// SanitizeOwned is Sanitize for arguments the caller owns and needs no longer as they
// came (a map decoded for this one call): it drops the reserved top-level keys from args
// itself instead of copying it, and returns args as clean (an empty map for nil). The
// result is what Sanitize would return; nested values are left as they are.
func SanitizeOwned(tool string, args map[string]any) (canonicalTool string, clean map[string]any) {
	if args == nil {
		args = map[string]any{}
	}
	for k := range args {
		if policy.Reserved(k) {
			delete(args, k) // deleting the key being visited is allowed during range
		}
	}
	return policy.CanonicalTool(tool), args
}
