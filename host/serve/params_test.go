package serve

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
)

// TestCheckCreateTools: create_session's tools and exclude_tools become the session's
// selection; an unknown name, a tool in both lists or an empty tools list is invalid
// params naming the member, never ignored.
func TestCheckCreateTools(t *testing.T) {
	ceiling := authz.Ceiling{AllowedModes: []authz.Mode{authz.Standard}, MaxSessionTTL: time.Hour, MaxIdleTTL: time.Hour}
	for _, tc := range []struct {
		name          string
		tools, excl   []string
		want          string // error substring; "" accepts
		only, exclude []string
	}{
		{name: "none"},
		{name: "only", tools: []string{"zoom", "list_windows"}, only: []string{"list_windows", "zoom"}},
		{name: "exclude", excl: []string{"kill_app"}, exclude: []string{"kill_app"}},
		{name: "unknown", tools: []string{"zoom", "zooom"}, want: `invalid params: "tools": unknown tool "zooom" (did you mean "zoom"?)`},
		{name: "unknown excluded", excl: []string{"shell"}, want: `invalid params: "exclude_tools": unknown tool "shell"`},
		{name: "both", tools: []string{"zoom"}, excl: []string{"zoom"}, want: `invalid params: "exclude_tools": tool "zoom" is in both lists`},
		{name: "empty list", tools: []string{}, want: `invalid params: "tools" is empty`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, e := checkCreate(createParams{Label: "s", Tools: tc.tools, ExcludeTools: tc.excl}, ceiling)
			if tc.want != "" {
				if e == nil || e.Code != CodeInvalidParams || !strings.Contains(e.Message, tc.want) {
					t.Errorf("checkCreate(tools %q, exclude_tools %q) = %v, want invalid params saying %q", tc.tools, tc.excl, e, tc.want)
				}
				return
			}
			if e != nil {
				t.Fatalf("checkCreate(tools %q, exclude_tools %q) = %v", tc.tools, tc.excl, e)
			}
			if !slices.Equal(spec.tools.Only(), tc.only) || !slices.Equal(spec.tools.Exclude(), tc.exclude) {
				t.Errorf("checkCreate(tools %q, exclude_tools %q) selection %v, want only %q exclude %q", tc.tools, tc.excl, spec.tools, tc.only, tc.exclude)
			}
		})
	}
}
