package e2e

import (
	"strings"
	"testing"
)

// TestDefaultDisplayIsNested: `cua-host run` without --display, started where a person's
// display is in $DISPLAY, gives the agent a nested display (the window appears on the
// person's display, the worker drives another display), and never the person's own. Oracles:
// xwininfo on the person's display, health_report's display name, xdotool's pointer and
// focus on the person's display.
func TestDefaultDisplayIsNested(t *testing.T) {
	needDesktop(t)
	need(t, "Xephyr", "xdotool", "xwininfo")
	p := startPerson(t)
	env := append(p.d.Env(), "HOME="+t.TempDir(), "LANG=C.UTF-8")
	rp := startRunEnv(t, env, "--mode", "unrestricted", "--dangerously-bypass-approvals")
	p.nestedWindow()
	_, health := rp.mustCall(t, "health_report", nil)
	if d, _ := health["display"].(string); d == "" || d == p.d.Name() || health["private_display"] != true {
		t.Errorf("health_report: display %q private %v, want a nested display, not the person's %s", d, health["private_display"], p.d.Name())
	}
	if tree := p.tree(); !strings.Contains(tree, `"`+nestedTitle+`"`) {
		t.Errorf("no nested window on the person's display:\n%s", tree)
	}
	p.untouched("with the default display")
}
