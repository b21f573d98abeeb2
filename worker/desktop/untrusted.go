package desktop

import "path/filepath"

// untrustedLimits are the measured limits of programs launched as untrusted X clients (on a
// display shared with a person), keyed by executable base name. scripts/untrusted-apps.sh
// measures them; docs/security.md has the table. Only measured facts belong here.
var untrustedLimits = map[string]string{}

// untrustedWarnings returns what is known not to work for exe as an untrusted X client.
func untrustedWarnings(exe string) []string {
	if w, ok := untrustedLimits[filepath.Base(exe)]; ok {
		return []string{w}
	}
	return nil
}
