package harness

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// WindowInfo is what xwininfo reports about a window: an oracle that reads the server
// through a program of its own.
type WindowInfo struct {
	// Exists is false when the server has no such window.
	Exists bool
	// Viewable is "Map State: IsViewable"; OverrideRedirect "Override Redirect State: yes".
	Viewable, OverrideRedirect bool
	// X, Y are the absolute upper-left corner, W, H the size.
	X, Y, W, H int
}

var xwininfoField = regexp.MustCompile(`(?m)^\s*(Absolute upper-left X|Absolute upper-left Y|Width|Height|Map State|Override Redirect State):\s*(\S+)`)

// XWinInfo asks the server, through xwininfo, about window id.
func XWinInfo(t testing.TB, id uint32) WindowInfo {
	t.Helper()
	out, err := exec.Command("xwininfo", "-id", fmt.Sprint(id)).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "BadWindow") || strings.Contains(string(out), "No such window") {
			return WindowInfo{}
		}
		t.Fatalf("xwininfo -id %d: %v: %s", id, err, out)
	}
	wi := WindowInfo{Exists: true}
	for _, m := range xwininfoField.FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.Atoi(m[2])
		switch m[1] {
		case "Absolute upper-left X":
			wi.X = n
		case "Absolute upper-left Y":
			wi.Y = n
		case "Width":
			wi.W = n
		case "Height":
			wi.H = n
		case "Map State":
			wi.Viewable = m[2] == "IsViewable"
		case "Override Redirect State":
			wi.OverrideRedirect = m[2] == "yes"
		}
	}
	return wi
}
