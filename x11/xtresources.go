package x11

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// untrustedSelection is the selection an untrusted xterm owns instead of PRIMARY
// (untrustedXtResources). xterm takes only the standard names; SECONDARY is the one
// programs leave alone.
const untrustedSelection = "SECONDARY"

// untrustedXtResources are X resources for Xt programs launched as untrusted X clients.
//
// xterm, by default, stores what is selected in the root window's CUT_BUFFER0 and owns
// PRIMARY. An untrusted client may change no property of a window a trusted client (or
// the server) owns, and xterm exits at its first X error: a triple-click in it ended it
// (ChangeProperty of the root: BadAccess), and so did a person's middle-click paste in
// their own program once it owned PRIMARY (its answer is a ChangeProperty of the trusted
// requestor's window). So it selects into SECONDARY, which programs do not ask for, and
// pastes from that selection first, then PRIMARY and the cut buffer, which it can read:
// selecting and pasting inside the program work, and what it selects never reaches the
// person's paste. (A program that asks for SECONDARY still ends it.)
var untrustedXtResources = strings.Join([]string{
	`*VT100.translations: #override \n\`,
	`	Shift <KeyPress> Select: select-cursor-start() select-cursor-end(` + untrustedSelection + `) \n\`,
	`	Shift <KeyPress> Insert: insert-selection(` + untrustedSelection + `, PRIMARY, CUT_BUFFER0) \n\`,
	`	~Ctrl ~Meta <Btn2Up>: insert-selection(` + untrustedSelection + `, PRIMARY, CUT_BUFFER0) \n\`,
	`	<BtnUp>: select-end(` + untrustedSelection + `)`,
	``,
}, "\n")

// writeXtResources writes untrustedXtResources to a file in dir for XENVIRONMENT and
// returns its path. Xt reads XENVIRONMENT instead of the user's ~/.Xdefaults-HOST, so the
// file first includes whichever of the two the user has.
func writeXtResources(dir string) (string, error) {
	var b strings.Builder
	if own := userXtEnvironment(); own != "" && !strings.ContainsAny(own, "\"\n") {
		fmt.Fprintf(&b, "#include \"%s\"\n", own)
	}
	b.WriteString(untrustedXtResources)
	path := filepath.Join(dir, "xt-resources")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return "", fmt.Errorf("x11: xt resources for untrusted launches: %w", err)
	}
	return path, nil
}

// userXtEnvironment returns the file Xt would read the user's per-host resources from:
// $XENVIRONMENT, else ~/.Xdefaults-HOST when it exists; "" when neither.
func userXtEnvironment() string {
	if p := os.Getenv("XENVIRONMENT"); p != "" {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	host, err := os.Hostname()
	if err != nil {
		return ""
	}
	p := filepath.Join(home, ".Xdefaults-"+host)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}
