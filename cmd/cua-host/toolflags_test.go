package main

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestToolFlags: --tools and --exclude-tools resolve to the session spec's selection
// (canonical names, sorted); an unknown, empty or unserved name, or a tool in both, stops
// the start with a message naming the flag.
func TestToolFlags(t *testing.T) {
	for _, tc := range []struct {
		name          string
		args          []string
		want          string // error substring; "" resolves
		only, exclude []string
	}{
		{name: "none", args: nil},
		{name: "only", args: []string{"--tools", "list_windows,get_window_state"}, only: []string{"get_window_state", "list_windows"}},
		{name: "exclude with an alias", args: []string{"--exclude-tools", "kill_app, type_text_chars"}, exclude: []string{"kill_app", "type_text"}},
		{name: "unknown", args: []string{"--tools", "click,clik"}, want: `--tools: unknown tool "clik" (did you mean "click"?)`},
		{name: "unknown excluded", args: []string{"--exclude-tools", "screenshots"}, want: `--exclude-tools: unknown tool "screenshots"`},
		{name: "empty name", args: []string{"--tools", "click,"}, want: "--tools: an empty tool name"},
		{name: "not served", args: []string{"--exclude-tools", "run_shell"}, want: `--exclude-tools: tool "run_shell" is classified but not one cua-host serves`},
		{name: "both", args: []string{"--tools", "click", "--exclude-tools", "click"}, want: `--exclude-tools: tool "click" is in both lists`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("run", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			sf := addSessionFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			setup, err := sf.resolve("t", func(string) string { return "" })
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("resolve(%q) = %v, want an error saying %q", tc.args, err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("resolve(%q) = %v", tc.args, err)
			}
			if !slices.Equal(setup.spec.Tools, tc.only) || !slices.Equal(setup.spec.ExcludeTools, tc.exclude) {
				t.Errorf("resolve(%q) spec tools %q exclude %q, want %q and %q", tc.args, setup.spec.Tools, setup.spec.ExcludeTools, tc.only, tc.exclude)
			}
		})
	}
}
