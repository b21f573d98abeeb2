// Package sandbox confines a program with bubblewrap (bwrap, the sandbox Flatpak is built
// on). The program sees the files its launcher sees, except the ones it is told to hide; a
// /proc of a PID namespace of its own, so no other process of the user is visible; one X
// server socket; and no controlling terminal, so it cannot push input into the terminal it
// was started from. It dies with its launcher.
//
// It is for the programs a cua-host session launches. It is not a container runtime: the
// network namespace is shared (abstract Unix sockets, loopback TCP and the internet stay
// reachable), and the user's other files stay readable and writable, as the apps people
// run need them. docs/security.md lists what a sandboxed program can and cannot reach.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ErrUnavailable reports that no sandbox can be built on this machine: bubblewrap is
// missing, or the kernel does not let this user create the namespaces it needs.
var ErrUnavailable = errors.New("sandbox: bubblewrap cannot confine programs here")

// Spec describes one sandbox.
type Spec struct {
	// Hide lists files and directories the program must not see. A directory becomes an
	// empty, writable one of its own (a tmpfs), a file an empty one (/dev/null). A path
	// that is, or runs through, a symbolic link is hidden where it resolves to. Paths that do
	// not exist are skipped.
	Hide []string
	// Keep lists files and directories under a hidden directory that the program needs
	// (the cookie of its own display, a bus socket): each is bound back at its own path,
	// after everything is hidden. Paths that do not exist are skipped.
	Keep []string
	// Display is the number of the only X server socket under /tmp/.X11-unix the program
	// sees; a negative number hides them all.
	Display int
	// SetEnv are NAME=VALUE variables set in the program's environment.
	SetEnv []string
}

// xSocketDir is where X servers put their local sockets.
const xSocketDir = "/tmp/.X11-unix"

// Args returns bubblewrap's arguments for running argv in the sandbox: the options, "--"
// and argv. argv[0] must be an absolute path.
func (s Spec) Args(argv []string) []string {
	args := []string{
		"--die-with-parent", // the launcher's death ends the sandbox and all it holds
		"--new-session",     // no controlling terminal: no TIOCSTI into the launcher's
		"--unshare-pid",
	}
	args = append(args, capDrops()...)
	args = append(args,
		"--dev-bind", "/", "/",
		"--proc", "/proc",
		// A /dev of its own: its own pseudo-terminals, so the terminals of the person's
		// (the one a --consent tty question is asked on) are not there to open; the
		// graphics and sound devices apps use are bound back.
		"--dev", "/dev",
		"--dev-bind-try", "/dev/dri", "/dev/dri",
		"--dev-bind-try", "/dev/snd", "/dev/snd",
	)
	hidden := map[string]bool{}
	for _, p := range s.Hide {
		for _, q := range resolved(p) {
			if hidden[q] {
				continue
			}
			st, err := os.Stat(q)
			if err != nil {
				continue
			}
			hidden[q] = true
			if st.IsDir() {
				args = append(args, "--tmpfs", q)
			} else {
				args = append(args, "--ro-bind", "/dev/null", q)
			}
		}
	}
	// The X sockets: every one hidden, the display's own bound back.
	if _, err := os.Stat(xSocketDir); err == nil {
		args = append(args, "--tmpfs", xSocketDir)
		if s.Display >= 0 {
			sock := xSocketDir + "/X" + strconv.Itoa(s.Display)
			if _, err := os.Stat(sock); err == nil {
				args = append(args, "--bind", sock, sock)
			}
		}
	}
	for _, p := range s.Keep {
		for _, q := range resolved(p) {
			args = append(args, "--bind", q, q)
		}
	}
	for _, kv := range s.SetEnv {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			args = append(args, "--setenv", k, v)
		}
	}
	args = append(args, "--")
	return append(args, argv...)
}

// rootCapDrops are the capabilities a program keeps from a launcher running as root that
// would undo the sandbox: mounting and unmounting (what hides the files), opening files by
// handle past the mounts (open_by_handle_at), raw devices and memory, kernel modules,
// tracing. The rest stay: xterm, run as root, needs to give its pseudo-terminal to the tty
// group, and a root program can read the root user's files with or without them.
var rootCapDrops = []string{"CAP_SYS_ADMIN", "CAP_DAC_READ_SEARCH", "CAP_MKNOD", "CAP_SYS_RAWIO",
	"CAP_SYS_MODULE", "CAP_SYS_PTRACE", "CAP_SYS_BOOT", "CAP_BPF", "CAP_PERFMON", "CAP_SYSLOG",
	"CAP_SYS_TIME", "CAP_MAC_ADMIN", "CAP_MAC_OVERRIDE", "CAP_AUDIT_CONTROL", "CAP_LINUX_IMMUTABLE"}

// capDrops returns bubblewrap's capability options: an unprivileged launcher's program has
// none to begin with; one running as root loses rootCapDrops.
func capDrops() []string {
	if os.Geteuid() != 0 {
		return []string{"--cap-drop", "ALL"}
	}
	out := make([]string, 0, 2*len(rootCapDrops))
	for _, c := range rootCapDrops {
		out = append(out, "--cap-drop", c)
	}
	return out
}

// resolved returns the path p names once its symbolic links are followed (a mount cannot
// sit on a link: the file it points to is the one to hide), or nothing when p is not
// absolute or does not exist.
func resolved(p string) []string {
	if p == "" || !filepath.IsAbs(p) {
		return nil
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil
	}
	return []string{r}
}

// bwrapPaths are where bubblewrap is looked for, in order. The user's PATH is not
// searched: what confines the agent's programs must not be a file the agent could place.
var bwrapPaths = []string{"/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"}

// Find returns the path of bubblewrap, or ErrUnavailable saying what to install.
func Find() (string, error) {
	for _, p := range bwrapPaths {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: bwrap is not installed (Debian and Ubuntu: apt install bubblewrap)", ErrUnavailable)
}

// Probe checks that bubblewrap at bwrap can build this package's sandbox for the current
// user by running /bin/true in one, and says why not (ErrUnavailable with bwrap's own
// words: user namespaces off, a seccomp filter, a missing /proc).
func Probe(bwrap string) error {
	truePath := "/bin/true"
	if _, err := os.Stat(truePath); err != nil {
		truePath = "/usr/bin/true"
	}
	cmd := exec.Command(bwrap, Spec{Display: -1}.Args([]string{truePath})...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("%w: %s (unprivileged user namespaces may be off: sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces, or an AppArmor restriction)", ErrUnavailable, msg)
	}
	return nil
}

// PersonSecrets returns the places, existing now, where the files that open the person's
// desktop are kept: X cookies (~/.Xauthority, the files display managers and startx
// write), the ICE cookie of the session manager, and the person's runtime directory
// (/run/user/UID: the session bus, systemd's user manager, keyrings, other cookies).
// Paths in except, and every path under one, are left out.
func PersonSecrets(home string, uid int, except []string) []string {
	var pats []string
	if home != "" && filepath.IsAbs(home) {
		pats = append(pats, filepath.Join(home, ".Xauthority"), filepath.Join(home, ".ICEauthority"),
			filepath.Join(home, ".serverauth.*"), filepath.Join(home, ".Xauthority-*"))
	}
	pats = append(pats,
		"/run/user/"+strconv.Itoa(uid),
		"/tmp/xauth_*", "/tmp/xauth-*", "/tmp/serverauth.*", "/tmp/.xauth*",
		"/run/lightdm", "/var/run/lightdm", "/run/sddm", "/var/run/sddm",
		"/var/lib/gdm3/.Xauthority", "/tmp/cua-display-*", "/tmp/cua-untrusted-*", "/tmp/cua-host-serve-*")
	var out []string
	for _, pat := range pats {
		matches, _ := filepath.Glob(pat)
		for _, m := range matches {
			if !under(m, except) {
				out = append(out, m)
			}
		}
	}
	return out
}

// under reports whether p is one of dirs or lies under one.
func under(p string, dirs []string) bool {
	return slices.ContainsFunc(dirs, func(d string) bool {
		d = filepath.Clean(d)
		return p == d || strings.HasPrefix(p, d+"/")
	})
}
