package x11

import (
	"encoding/binary"
	"sync"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// atomCache interns atoms once per connection.
type atomCache struct {
	conn *xgb.Conn
	// mu guards m.
	mu sync.Mutex
	m  map[string]xproto.Atom
}

func (a *atomCache) init(c *xgb.Conn) {
	a.conn = c
	a.m = map[string]xproto.Atom{}
}

// get returns the atom named name, interning it; 0 on error.
func (a *atomCache) get(name string) xproto.Atom {
	a.mu.Lock()
	at, ok := a.m[name]
	a.mu.Unlock()
	if ok {
		return at
	}
	r, err := xproto.InternAtom(a.conn, false, uint16(len(name)), name).Reply()
	if err != nil {
		return 0
	}
	a.mu.Lock()
	a.m[name] = r.Atom
	a.mu.Unlock()
	return r.Atom
}

// getProperty reads a whole property (up to 64 MiB); nil reply when unset.
func getProperty(c *xgb.Conn, w xproto.Window, prop xproto.Atom) (*xproto.GetPropertyReply, error) {
	r, err := xproto.GetProperty(c, false, w, prop, xproto.GetPropertyTypeAny, 0, 1<<24).Reply()
	if err != nil {
		return nil, xerr("GetProperty", err)
	}
	if r.Format == 0 {
		return nil, nil
	}
	return r, nil
}

// propUint32s decodes a format-32 property.
func propUint32s(r *xproto.GetPropertyReply) []uint32 {
	if r == nil || r.Format != 32 {
		return nil
	}
	n := len(r.Value) / 4
	out := make([]uint32, n)
	for i := range n {
		out[i] = binary.LittleEndian.Uint32(r.Value[i*4:])
	}
	return out
}

// propWindow reads a single WINDOW/CARDINAL value from a property of w; 0 when unset.
func (b *Backend) propUint32(w xproto.Window, name string) (uint32, bool) {
	r, err := getProperty(b.conn, w, b.atoms.get(name))
	if err != nil || r == nil {
		return 0, false
	}
	v := propUint32s(r)
	if len(v) == 0 {
		return 0, false
	}
	return v[0], true
}

// wmName returns the EWMH window manager's name, or "" when none runs.
func (b *Backend) wmName() string {
	check, ok := b.propUint32(b.root, "_NET_SUPPORTING_WM_CHECK")
	if !ok || check == 0 {
		return ""
	}
	r, err := getProperty(b.conn, xproto.Window(check), b.atoms.get("_NET_WM_NAME"))
	if err != nil {
		return ""
	}
	if r == nil || len(r.Value) == 0 {
		return "unknown"
	}
	return string(r.Value)
}

// ewmh reports whether an EWMH window manager runs.
func (b *Backend) ewmh() bool {
	check, ok := b.propUint32(b.root, "_NET_SUPPORTING_WM_CHECK")
	return ok && check != 0
}
