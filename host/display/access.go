package display

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Access is how an X server admits local clients: whether it lets this user in with no
// cookie at all, and why. A display that does cannot be kept from a program by hiding
// cookie files: any process of the user, sandboxed or not, connects as a trusted client.
type Access struct {
	// NoCookie is true when a connection that presents no authorization is accepted.
	NoCookie bool
	// ControlDisabled is true when the server's access control is off altogether (`xhost
	// +`, or a server started without -auth): every client that reaches the socket is in.
	ControlDisabled bool
	// Hosts are the server's host-based entries in xhost's notation ("si:localuser:alice",
	// "local:", "inet:127.0.0.1"), read with ListHosts when the connection was accepted.
	Hosts []string
}

// String says what the facts mean, in one line.
func (a Access) String() string {
	switch {
	case !a.NoCookie:
		return "clients need the display's cookie"
	case a.ControlDisabled:
		return "access control is off: every local client is admitted without a cookie"
	case len(a.Hosts) > 0:
		return "this user is admitted without a cookie (" + strings.Join(a.Hosts, ", ") + ")"
	}
	return "the server checks no cookie (started without -auth): every local client is admitted"
}

// ProbeAccess connects to the local display name (":N", ":N.S", "unix:N") presenting no
// cookie, and when the server accepts, asks it for its host list (ListHosts) to say why.
func ProbeAccess(ctx context.Context, name string) (Access, error) {
	num, err := localDisplayNumber(name)
	if err != nil {
		return Access{}, err
	}
	x, err := dialX(ctx, num, nil)
	if errors.Is(err, ErrAuthRefused) {
		return Access{}, nil
	}
	if err != nil {
		return Access{}, err
	}
	defer x.Close()
	a := Access{NoCookie: true}
	rep, err := x.roundTrip([]byte{110, 0, 1, 0}) // ListHosts, length 1
	if err != nil {
		return a, fmt.Errorf("ListHosts: %w", err)
	}
	a.ControlDisabled, a.Hosts, err = parseHosts(rep)
	return a, err
}

// parseHosts reads a ListHosts reply: byte 1 the mode (0 disabled, 1 enabled), bytes 8–9
// the number of hosts, then from byte 32 each host: family (1 byte), unused (1), address
// length (2), the address padded to 4 bytes.
func parseHosts(rep []byte) (disabled bool, hosts []string, err error) {
	if len(rep) < 32 {
		return false, nil, errors.New("ListHosts: short reply")
	}
	disabled = rep[1] == 0
	n := int(binary.LittleEndian.Uint16(rep[8:]))
	off := 32
	for i := 0; i < n; i++ {
		if off+4 > len(rep) {
			return disabled, hosts, errors.New("ListHosts: truncated host list")
		}
		family := rep[off]
		l := int(binary.LittleEndian.Uint16(rep[off+2:]))
		if off+4+l > len(rep) {
			return disabled, hosts, errors.New("ListHosts: truncated host address")
		}
		hosts = append(hosts, hostEntry(family, rep[off+4:off+4+l]))
		off += 4 + pad4(l)
	}
	return disabled, hosts, nil
}

// hostEntry writes one host in xhost's notation.
func hostEntry(family byte, addr []byte) string {
	switch family {
	case 0: // Internet
		if len(addr) == 4 {
			return fmt.Sprintf("inet:%d.%d.%d.%d", addr[0], addr[1], addr[2], addr[3])
		}
	case 5: // ServerInterpreted: type NUL value
		if t, v, ok := strings.Cut(string(addr), "\x00"); ok {
			return "si:" + t + ":" + v
		}
	case 6: // Internet6
		return fmt.Sprintf("inet6:%x", addr)
	case 252: // LocalHost
		return "local:"
	}
	return fmt.Sprintf("family%d:%x", family, addr)
}

// localDisplayNumber returns N of ":N", ":N.S", "unix:N" or "unix:N.S".
func localDisplayNumber(name string) (int, error) {
	host, rest, ok := strings.Cut(name, ":")
	if !ok || (host != "" && host != "unix") {
		return 0, fmt.Errorf("display %q: only local displays (:N) are supported", name)
	}
	rest, _, _ = strings.Cut(rest, ".")
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("display %q: bad display number", name)
	}
	return n, nil
}
