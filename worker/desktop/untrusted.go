package desktop

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/cua-host/cua-host/authz"
)

// untrustedLimits are the measured limits of programs launched as untrusted X clients (on a
// display shared with a person), keyed by executable base name. scripts/untrusted-apps.sh
// measures them and docs/security.md has the table: only measured facts belong here.
var untrustedLimits = map[string]string{
	"xdotool":  "xdotool runs as an untrusted X client here: the X server hides XTEST from it, so its input commands fail (measured: exit 139, \"XTEST extension unavailable\")",
	"xwd":      "xwd runs as an untrusted X client here: it cannot read images of the root window or of windows of trusted clients (measured: exit 1)",
	"xclip":    "xclip runs as an untrusted X client here: it cannot own the clipboard (xclip -i fails with an X error); reading the clipboard works",
	"xprop":    "xprop runs as an untrusted X client here: it cannot change properties of trusted clients' windows (-set fails with BadAccess); reading them works",
	"xdpyinfo": "xdpyinfo runs as an untrusted X client here: it sees only the BIG-REQUESTS and XC-MISC extensions",
}

// untrustedWarnings returns what is known not to work for exe as an untrusted X client.
func untrustedWarnings(exe string) []string {
	if w, ok := untrustedLimits[filepath.Base(exe)]; ok {
		return []string{w}
	}
	return nil
}

// untrustedBroken are programs measured to start as untrusted X clients in a state that
// corrupts input, keyed by base name: Chromium gets no XKEYBOARD extension, and typed
// capitals and shifted symbols arrive as their unshifted keys.
var untrustedBroken = map[string]string{
	"chromium":             "Chromium runs as an untrusted X client here without the XKEYBOARD extension, and typed capitals and shifted symbols arrive as their unshifted keys",
	"chromium-browser":     "Chromium runs as an untrusted X client here without the XKEYBOARD extension, and typed capitals and shifted symbols arrive as their unshifted keys",
	"google-chrome":        "Chrome runs as an untrusted X client here without the XKEYBOARD extension, and typed capitals and shifted symbols arrive as their unshifted keys",
	"google-chrome-stable": "Chrome runs as an untrusted X client here without the XKEYBOARD extension, and typed capitals and shifted symbols arrive as their unshifted keys",
}

// untrustedRefusal refuses, before anything starts, a launch as an untrusted X client of a
// program that cannot work as one: a GTK 4 program (it links libgtk-4, which exits
// without the XKEYBOARD extension the X server hides from untrusted clients) or one of
// untrustedBroken. The agent is pointed at a desktop of its own, where programs are
// trusted clients of a display nobody else uses.
func untrustedRefusal(argv []string) error {
	if len(argv) == 0 {
		return nil
	}
	name := filepath.Base(argv[0])
	why, ok := untrustedBroken[name]
	if !ok {
		if path, err := exec.LookPath(argv[0]); err == nil && needsLibrary(path, "libgtk-4.so.1") {
			why, ok = name+" is a GTK 4 program, and GTK 4 does not start as an untrusted X client (it needs the XKEYBOARD extension the X server hides from untrusted clients)", true
		}
	}
	if !ok {
		return nil
	}
	return authz.Refuse(authz.CodeUnsupported, "%s; nothing was started. On a display shared with a person, what the session launches is an untrusted X client; "+
		"run the session with --display nested to give it a desktop of its own, where it works", why)
}

// needsLibrary reports whether the ELF file at path names lib among its needed libraries.
func needsLibrary(path, lib string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	return err == nil && slices.Contains(libs, lib)
}
