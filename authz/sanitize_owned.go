package authz

import "github.com/cua-host/cua-host/policy"

// SanitizeOwned is Sanitize for arguments the caller owns and needs no longer as they
// came (a map decoded for this one call): it drops the reserved top-level keys from args
// itself instead of copying it, and returns args as clean (an empty map for nil). The
// result is what Sanitize would return; nested values are left as they are.
//
// In the same pass it refuses, with invalid_arguments, an argument name outside
// [a-z0-9_]. Every tool's arguments are lowercase snake_case, and encoding/json matches
// struct fields case-insensitively with Unicode folding ("mar\u212Aer" reaches the field
// "marker"): a name the policy and the resolver see as different from the one the
// handler reads would let a value past them unchecked. After a nil refusal, every name in
// clean is lowercase ASCII letters, digits and underscores.
func SanitizeOwned(tool string, args map[string]any) (canonicalTool string, clean map[string]any, r *Refusal) {
	if args == nil {
		args = map[string]any{}
	}
	for k := range args {
		switch {
		case policy.Reserved(k):
			delete(args, k) // deleting the key being visited is allowed during range
		case !lowerSnake(k):
			r = Refuse(CodeInvalidArguments, "argument name %q: names are lowercase ASCII letters, digits and underscores", k)
		}
	}
	return policy.CanonicalTool(tool), args, r
}

// lowerSnake reports whether k is made of lowercase ASCII letters, digits and underscores.
func lowerSnake(k string) bool {
	for i := 0; i < len(k); i++ {
		if c := k[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}
