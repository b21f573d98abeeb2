package mcpproxy

import (
	"slices"
	"sort"
	"testing"

	"github.com/cua-host/cua-host/policy"
)

// TestHiddenAliasesAreThePolicyAliases: the names the proxy forwards but never lists are
// exactly the tool aliases the policy language declares (policy.AliasNames), so an alias
// is declared once and a second list cannot drift from it.
func TestHiddenAliasesAreThePolicyAliases(t *testing.T) {
	var hidden []string
	for name, on := range hiddenAliases {
		if on {
			hidden = append(hidden, name)
		}
	}
	sort.Strings(hidden)
	if want := policy.AliasNames(); !slices.Equal(hidden, want) {
		t.Errorf("the proxy hides %v, the policy's aliases are %v", hidden, want)
	}
}
