package x11

import (
	"context"
	"net"
	"strconv"
	"strings"

	"github.com/jezek/xgb/xproto"
	"golang.org/x/sys/unix"
)

// Infrastructure is the processes a desktop session runs on, which an agent must never
// stop or drive: found from the server itself, so they are known on a display cua-host did
// not start too.
type Infrastructure struct {
	// ServerPID is the X server, from the peer credentials of a local connection to it;
	// 0 for a server reached over TCP.
	ServerPID int `json:"server_pid"`
	// WindowManagerPID owns the _NET_SUPPORTING_WM_CHECK window; 0 without an EWMH
	// window manager.
	WindowManagerPID int `json:"window_manager_pid"`
	// CompositorPID owns the _NET_WM_CM_Sn selection of the screen; 0 without one.
	CompositorPID int `json:"compositor_pid"`
	// ShellPIDs own desktop and dock windows (_NET_WM_WINDOW_TYPE_DESKTOP, _DOCK): the
	// desktop shell and its panels.
	ShellPIDs []int `json:"shell_pids"`
}

// PIDs returns every known pid of the infrastructure.
func (i Infrastructure) PIDs() []int {
	var out []int
	for _, p := range append([]int{i.ServerPID, i.WindowManagerPID, i.CompositorPID}, i.ShellPIDs...) {
		if p > 0 {
			out = append(out, p)
		}
	}
	return out
}

// Infrastructure finds the display's server, window manager, compositor and desktop shell
// processes. What cannot be found is left zero; it fails only when the connection does.
func (b *Backend) Infrastructure(ctx context.Context) (Infrastructure, error) {
	if b.closed() {
		return Infrastructure{}, ErrClosed
	}
	inf := Infrastructure{ServerPID: b.serverPID}
	if check, ok := b.propUint32(b.root, "_NET_SUPPORTING_WM_CHECK"); ok && check != 0 {
		inf.WindowManagerPID = b.xresPID(xproto.Window(check))
	}
	cm := "_NET_WM_CM_S" + strconv.Itoa(b.screen)
	if a, err := xproto.InternAtom(b.conn, false, uint16(len(cm)), cm).Reply(); err == nil {
		if r, err := xproto.GetSelectionOwner(b.conn, a.Atom).Reply(); err == nil && r.Owner != xproto.WindowNone {
			inf.CompositorPID = b.xresPID(r.Owner)
		}
	}
	ids, err := b.clientIDs()
	if err != nil {
		return inf, err
	}
	typ := b.atoms.get("_NET_WM_WINDOW_TYPE")
	shell := map[uint32]bool{uint32(b.atoms.get("_NET_WM_WINDOW_TYPE_DESKTOP")): true, uint32(b.atoms.get("_NET_WM_WINDOW_TYPE_DOCK")): true}
	cookies := make([]xproto.GetPropertyCookie, len(ids))
	for i, id := range ids {
		cookies[i] = xproto.GetProperty(b.conn, false, id, typ, xproto.AtomAtom, 0, 32)
	}
	seen := map[int]bool{}
	for i, c := range cookies {
		r, err := c.Reply()
		if err != nil {
			continue
		}
		for _, t := range propUint32s(r) {
			if shell[t] {
				if pid := b.xresPID(ids[i]); pid > 0 && !seen[pid] {
					seen[pid] = true
					inf.ShellPIDs = append(inf.ShellPIDs, pid)
				}
				break
			}
		}
		if err := ctx.Err(); err != nil {
			return inf, err
		}
	}
	return inf, nil
}

// serverPeerPID returns the pid of the X server of display (":1", "unix:1.0") from the
// peer credentials of a fresh connection to its local socket, closed before any byte is
// sent; 0 for a remote display or when the socket cannot be reached.
func serverPeerPID(display string) int {
	host, rest, ok := strings.Cut(display, ":")
	if !ok || (host != "" && host != "unix") {
		return 0
	}
	num, _, _ := strings.Cut(rest, ".")
	if _, err := strconv.Atoi(num); err != nil {
		return 0
	}
	for _, path := range []string{"@/tmp/.X11-unix/X" + num, "/tmp/.X11-unix/X" + num} {
		c, err := net.Dial("unix", path)
		if err != nil {
			continue
		}
		pid := peerPID(c.(*net.UnixConn))
		c.Close()
		if pid > 0 {
			return pid
		}
	}
	return 0
}

// peerPID reads SO_PEERCRED of a connected unix socket; 0 on failure.
func peerPID(c *net.UnixConn) int {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	_ = raw.Control(func(fd uintptr) {
		if cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
			pid = int(cred.Pid)
		}
	})
	return pid
}
