package desktop

import "path/filepath"

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
