package atspi

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func entry(role, name string, state StateSet) menuEntry {
	return menuEntry{n: &node{role: role, name: name, roleKnown: true, state: state}}
}

// TestMenuMatch: a segment matches exactly after trimming, else ignoring case; several
// matches at the first rule that finds any are ambiguous; none is missing. Every failure
// lists the level's names.
func TestMenuMatch(t *testing.T) {
	on := StateEnabled | StateSensitive | StateShowing
	level := []menuEntry{
		entry("menu item", "Save", on), entry("menu item", " Save As… ", on), entry("menu item", "save", on),
		entry("menu item", "Close", on), entry("menu item", "CLOSE", on), entry("menu", "Recent", on), entry("menu item", "", on),
	}
	tests := []struct {
		seg, name, how, reason string
	}{
		{seg: "Save", name: "Save", how: "exact"},
		{seg: "  Save ", name: "Save", how: "exact"},
		{seg: "Save As…", name: "Save As…", how: "exact"},
		{seg: "save as…", name: "Save As…", how: "case_insensitive"},
		{seg: "recent", name: "Recent", how: "case_insensitive"},
		{seg: "close", reason: MenuAmbiguous},
		{seg: "Open", reason: MenuMissing},
		{seg: "Sav", reason: MenuMissing},
	}
	for _, tc := range tests {
		e, how, err := match(level, tc.seg, 2)
		if tc.reason != "" {
			var me *MenuError
			if !errors.As(err, &me) || me.Reason != tc.reason || me.Hop != 2 || me.Segment != tc.seg || !errors.Is(err, ErrMenuPath) {
				t.Errorf("match(%q) = %v, want %s", tc.seg, err, tc.reason)
				continue
			}
			if want := []string{"Save", "Save As…", "save", "Close", "CLOSE", "Recent"}; !slices.Equal(me.Available, want) {
				t.Errorf("match(%q) lists %q, want %q", tc.seg, me.Available, want)
			}
			if !strings.Contains(err.Error(), `"Save As…"`) || !strings.Contains(err.Error(), "the menu of path[1]") {
				t.Errorf("message %q", err)
			}
			continue
		}
		if err != nil || e.name() != tc.name || how != tc.how {
			t.Errorf("match(%q) = %q by %s, %v; want %q by %s", tc.seg, e.name(), how, err, tc.name, tc.how)
		}
	}
}

// TestMenuFits: disabled entries, items where a submenu belongs and submenus named last
// are refused with their reason.
func TestMenuFits(t *testing.T) {
	on := StateEnabled | StateSensitive | StateShowing
	tests := []struct {
		name   string
		e      menuEntry
		last   bool
		reason string
	}{
		{"item last", entry("menu item", "Quit", on), true, ""},
		{"check item last", entry("check menu item", "Bold", on), true, ""},
		{"submenu on the way", entry("menu", "Color", on), false, ""},
		{"sensitive only", entry("menu item", "Quit", StateSensitive), true, ""},
		{"disabled item", entry("menu item", "Paste", StateShowing), true, MenuDisabled},
		{"disabled submenu", entry("menu", "Recent", StateShowing), false, MenuDisabled},
		{"item on the way", entry("menu item", "Quit", on), false, MenuNotSubmenu},
		{"submenu last", entry("menu", "Color", on), true, MenuIsSubmenu},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := fits(tc.e, 1, tc.e.name(), tc.last, []menuEntry{tc.e})
			var me *MenuError
			switch {
			case tc.reason == "" && err != nil:
				t.Errorf("fits = %v, want nil", err)
			case tc.reason != "" && (!errors.As(err, &me) || me.Reason != tc.reason):
				t.Errorf("fits = %v, want %s", err, tc.reason)
			}
		})
	}
}
