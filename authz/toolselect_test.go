package authz

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestNewToolSelection(t *testing.T) {
	inv := DefaultInventory()
	for _, tc := range []struct {
		name          string
		only, exclude []string
		enabled       []string
		disabled      []string
		str           string
	}{
		{"zero", nil, nil, []string{"click", "get_session", "run_shell"}, nil, "all"},
		{"only", []string{"list_windows", " get_window_state "}, nil, []string{"list_windows", "get_window_state"}, []string{"click", "get_session"}, "only get_window_state,list_windows"},
		{"exclude", nil, []string{"click", "type_text_chars"}, []string{"get_session", "zoom"}, []string{"click", "type_text"}, "all but click,type_text"},
		{"both", []string{"click", "zoom"}, []string{"kill_app"}, []string{"click"}, []string{"kill_app", "list_windows"}, "only click,zoom but kill_app"},
		{"duplicates", []string{"zoom", "zoom"}, nil, []string{"zoom"}, []string{"click"}, "only zoom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewToolSelection(tc.only, tc.exclude, inv)
			if err != nil {
				t.Fatalf("NewToolSelection(%q, %q) = %v", tc.only, tc.exclude, err)
			}
			for _, tool := range tc.enabled {
				if !s.Enabled(tool) || s.Refusal(tool) != nil {
					t.Errorf("selection %v: Enabled(%s) = false, want true", s, tool)
				}
			}
			for _, tool := range tc.disabled {
				r := s.Refusal(tool)
				if s.Enabled(tool) || r == nil || r.Code != CodePermissionDenied || !strings.Contains(r.Message, tool) {
					t.Errorf("selection %v: Enabled(%s) = true or Refusal %v; want refused permission_denied naming it", s, tool, r)
				}
			}
			if got := s.String(); got != tc.str {
				t.Errorf("String() = %q, want %q", got, tc.str)
			}
		})
	}
}

func TestNewToolSelectionErrors(t *testing.T) {
	inv := DefaultInventory()
	for _, tc := range []struct {
		name          string
		only, exclude []string
		list, want    string
	}{
		{"unknown", []string{"clik"}, nil, "tools", `unknown tool "clik" (did you mean "click"?)`},
		{"unknown, nothing near", nil, []string{"frobnicate"}, "exclude_tools", `unknown tool "frobnicate"; `},
		{"empty name", []string{"click", ""}, nil, "tools", "an empty tool name"},
		{"not exposed", []string{"run_shell"}, nil, "tools", `tool "run_shell" is classified but not one cua-host serves`},
		{"in both lists", []string{"click", "zoom"}, []string{"zoom"}, "exclude_tools", `tool "zoom" is in both lists`},
		{"alias in both lists", []string{"type_text"}, []string{"type_text_chars"}, "exclude_tools", `tool "type_text" is in both lists`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewToolSelection(tc.only, tc.exclude, inv)
			var se *SelectionError
			if !errors.As(err, &se) || se.List != tc.list || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewToolSelection(%q, %q) = %v; want a %s error saying %q", tc.only, tc.exclude, err, tc.list, tc.want)
			}
		})
	}
}

func TestToolSelectionListsAreCopies(t *testing.T) {
	s, err := NewToolSelection([]string{"zoom", "click"}, []string{"kill_app"}, DefaultInventory())
	if err != nil {
		t.Fatal(err)
	}
	only := s.Only()
	only[0] = "kill_app"
	if got := s.Only(); !slices.Equal(got, []string{"click", "zoom"}) || !slices.Equal(s.Exclude(), []string{"kill_app"}) {
		t.Errorf("after changing Only()'s slice: Only() = %v, Exclude() = %v", got, s.Exclude())
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"click", "click", 0}, {"clik", "click", 1}, {"klick", "click", 1}, {"", "zoom", 4}, {"zoom", "room", 1}} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
