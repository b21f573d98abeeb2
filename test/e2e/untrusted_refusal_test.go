package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestUntrustedLaunchRefusesBrokenApps: on a display shared with a person, what the
// session launches is an untrusted X client. Programs measured not to work as one — a
// GTK 4 editor, which exits, and Chromium, whose typed capitals arrive lowercase — are
// refused unsupported before anything starts, pointing at --display nested; an xterm
// still launches. Witnesses: /proc shows no such process below cua-host and xdotool no such window.
func TestUntrustedLaunchRefusesBrokenApps(t *testing.T) {
	needDesktop(t)
	need(t, "xdotool")
	editor := needApp(t, "gnome-text-editor")
	chromium := needApp(t, "chromium")
	p := startPerson(t)
	rp := startRunEnv(t, append(p.d.Env(), "HOME="+t.TempDir(), "LANG=C.UTF-8"), "--display", p.d.Name(),
		"--mode", "unrestricted", "--dangerously-bypass-approvals", "--indicator=false")
	for _, app := range []struct{ path, comm, class string }{
		{editor, "gnome-text-edit", "gnome-text-editor"},
		{chromium, "chromium", "chromium"},
	} {
		res := rp.call(t, "launch_app", map[string]any{"name": app.path})
		if code := refusalCode(t, res); code != "unsupported" || outcomeOf(res) != "not_started" || !strings.Contains(text(res), "--display nested") {
			t.Errorf("launch_app %s on a shared display = %s %v %q, want a not_started unsupported refusal naming --display nested", app.path, code, outcomeOf(res), text(res))
		}
		time.Sleep(300 * time.Millisecond)
		// Anything the session starts runs below cua-host run (worker, sandbox).
		if p, ok := find(descendants(rp.cmd.Process.Pid), app.comm); ok {
			t.Errorf("a %s process (pid %d, %q) runs below cua-host after the refusal", app.comm, p.pid, p.cmdline)
		}
		if w := p.search(app.class); w != "" {
			t.Errorf("a %s window is on the person's display after the refusal: %s", app.class, w)
		}
	}
	_, launched := rp.mustCall(t, "launch_app", map[string]any{"name": "xterm", "additional_arguments": []string{"-title", "still-launches"}})
	if launched["untrusted_x_client"] != true || len(launched["window_ids"].([]any)) == 0 {
		t.Errorf("launch_app xterm on a shared display = %v, want an untrusted client with a window", launched)
	}
	p.untouched("after the launches")
}
