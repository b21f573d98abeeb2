package doctor

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// WriteText writes the report for people: one line per check (status, title, what was
// found), what a finding that is not ok means, the packages to install, and a verdict.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	switch {
	case r.Shared:
		fmt.Fprintf(&b, "display %s (from %s, shared with a person)\n\n", r.Display, r.DisplaySource)
	default:
		fmt.Fprintf(&b, "display: private, one run starts (from %s)\n\n", r.DisplaySource)
	}
	width := 0
	for _, c := range r.Checks {
		width = max(width, utf8.RuneCountInString(c.Title))
	}
	indent := strings.Repeat(" ", 9+width+1)
	for _, c := range r.Checks {
		found := c.Found
		if c.Status == Missing && !c.Required {
			found += " (the default run does not need it)"
		}
		fmt.Fprintf(&b, "%-8s %-*s %s\n", c.Status, width, c.Title, found)
		if c.Status != OK && c.Meaning != "" {
			fmt.Fprintf(&b, "%s→ %s\n", indent, c.Meaning)
		}
		if c.Status != OK && len(c.Install) > 0 {
			fmt.Fprintf(&b, "%sinstall: apt install %s\n", indent, strings.Join(c.Install, " "))
		}
	}
	b.WriteString("\n")
	if r.Ready {
		switch {
		case r.DisplaySource == "--display":
			fmt.Fprintf(&b, "ready: `cua-host run --display %s` has everything it needs\n", r.Display)
		case r.Shared:
			fmt.Fprintf(&b, "ready: the default `cua-host run` (on %s) has everything it needs\n", r.Display)
		default:
			b.WriteString("ready: the default `cua-host run` (on a private display) has everything it needs\n")
		}
	} else {
		var names, pkgs []string
		for _, id := range r.Missing {
			c, _ := r.Check(id)
			names = append(names, c.Title)
			for _, p := range c.Install {
				if !slices.Contains(pkgs, p) {
					pkgs = append(pkgs, p)
				}
			}
		}
		fmt.Fprintf(&b, "not ready: missing %s\n", strings.Join(names, ", "))
		if len(pkgs) > 0 {
			fmt.Fprintf(&b, "install: apt install %s\n", strings.Join(pkgs, " "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
