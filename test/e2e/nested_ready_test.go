package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNestedAccessibleRightAway: `cua-host run` serves before the accessibility bus of a
// nested display runs (it starts on the first request for it), and the first accessibility
// call waits for it. The
// agent launches a GTK dialog as its first call and asks for the dialog's accessible tree
// at once, without waiting for anything; the tree holds the label the test gave the dialog
// on its command line, which only the application's accessibility interface can report.
// Oracles: the label chosen here, and /proc, where the display's accessibility bus
// launcher runs among `run`'s descendants.
func TestNestedAccessibleRightAway(t *testing.T) {
	needDesktop(t)
	need(t, "Xephyr", "zenity", "xdotool")
	p := startPerson(t)
	rp := startNested(t, p)
	label := fmt.Sprintf("label-%d-right-away", os.Getpid())
	_, launched := rp.mustCall(t, "launch_app", map[string]any{"name": "zenity",
		"additional_arguments": []string{"--info", "--title", "nested-a11y", "--text", label}})
	ids, _ := launched["window_ids"].([]any)
	if len(ids) == 0 {
		t.Fatalf("launch_app zenity = %v", launched)
	}
	dialog := map[string]any{"pid": number(launched, "pid"), "window_id": int(ids[0].(float64)), "include_screenshot": false}
	_, state := rp.mustCall(t, "get_window_state", dialog)
	tree := fmt.Sprint(state)
	if !strings.Contains(tree, label) {
		t.Errorf("the first get_window_state of the dialog lacks its label %q: %.2000s", label, tree)
	}
	if !descendantRuns(rp.cmd.Process.Pid, "at-spi-bus-launcher") {
		t.Errorf("no at-spi-bus-launcher among the descendants of cua-host run (pid %d)", rp.cmd.Process.Pid)
	}
}

// descendantRuns reports whether a process whose executable's base name is name descends
// from root.
func descendantRuns(root int, name string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || filepath.Base(exe) != name {
			continue
		}
		for pid := e.Name(); pid != "0" && pid != "1"; {
			if pid == fmt.Sprint(root) {
				return true
			}
			stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
			if err != nil {
				break
			}
			s := string(stat)
			fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
			pid = fields[1]
		}
	}
	return false
}
