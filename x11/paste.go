package x11

import (
	"context"
	"slices"

	"github.com/jezek/xgb/xproto"
)

// Keysyms a paste combination is made of.
const (
	ksControlR  xproto.Keysym = 0xffe4
	ksShiftR    xproto.Keysym = 0xffe2
	ksInsert    xproto.Keysym = 0xff63
	ksKPInsert  xproto.Keysym = 0xff9e
	ksLowerV    xproto.Keysym = 0x76
	ksUpperV    xproto.Keysym = 0x56
	ksXF86Paste xproto.Keysym = 0x1008ff6d
)

// PasteSelections are the selections a paste may read: toolkits paste CLIPBOARD on ctrl+v
// and shift+Insert, xterm pastes PRIMARY on shift+Insert, and a middle click pastes
// PRIMARY almost everywhere.
var PasteSelections = []string{"CLIPBOARD", "PRIMARY"}

// IsPaste reports whether pressing combo is a paste in common toolkits: ctrl+v (with any
// further modifier, as terminals use ctrl+shift+v), shift+Insert, or the XF86Paste key.
// It is deliberately broad: a combination that pastes in some application counts, even if
// the focused one gives it another meaning.
func IsPaste(combo KeyCombo) bool {
	held := func(syms ...xproto.Keysym) bool {
		return slices.ContainsFunc(combo.Mods, func(m xproto.Keysym) bool { return slices.Contains(syms, m) }) ||
			slices.ContainsFunc(combo.Keys, func(m xproto.Keysym) bool { return slices.Contains(syms, m) })
	}
	for _, k := range combo.Keys {
		switch k {
		case ksXF86Paste:
			return true
		case ksLowerV, ksUpperV:
			if held(ksControlL, ksControlR) {
				return true
			}
		case ksInsert, ksKPInsert:
			if held(ksShiftL, ksShiftR) {
				return true
			}
		}
	}
	return false
}

// SelectionOwner returns the pid of the client owning selection name ("CLIPBOARD",
// "PRIMARY") as the X server observed it (X-Resource), and whether the selection has an
// owner at all. An owner whose pid the server cannot tell has pid 0.
func (b *Backend) SelectionOwner(ctx context.Context, name string) (pid int, owned bool, err error) {
	if b.closed() {
		return 0, false, ErrClosed
	}
	atom, err := xproto.InternAtom(b.conn, false, uint16(len(name)), name).Reply()
	if err != nil {
		return 0, false, xerr("InternAtom", err)
	}
	r, err := xproto.GetSelectionOwner(b.conn, atom.Atom).Reply()
	if err != nil {
		return 0, false, xerr("GetSelectionOwner", err)
	}
	if r.Owner == xproto.WindowNone {
		return 0, false, nil
	}
	return b.xresPID(r.Owner), true, nil
}
