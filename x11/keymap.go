package x11

import (
	"fmt"
	"slices"

	"github.com/jezek/xgb/xproto"
)

// ksModeSwitch is the keysym of the group switch: in the core protocol, the modifier bound
// to it selects a key's second group (columns 2 and 3); XKB keymaps give the key SetGroup.
const ksModeSwitch xproto.Keysym = 0xff7e

// keymap is a snapshot of the server's core keyboard mapping.
type keymap struct {
	min, max xproto.Keycode
	per      int
	syms     []xproto.Keysym // (kc-min)*per + column
	spare    []xproto.Keycode
	// modeSwitch is a keycode whose first keysym is Mode_switch and that is bound to one
	// of Mod1–Mod5 (0 when there is none); levels is how many symbols a remapped spare
	// keycode carries: 4 (two groups of two levels) with modeSwitch, else 2.
	modeSwitch xproto.Keycode
	levels     int
}

// remapState remembers keycodes this backend remapped and their original rows, to restore.
// Guarded by the input semaphore.
type remapState struct {
	orig map[xproto.Keycode][]xproto.Keysym
	per  int
}

// loadKeymapLocked reads the current mapping. Preconditions: input semaphore held.
func (b *Backend) loadKeymapLocked() (*keymap, error) {
	setup := xproto.Setup(b.conn)
	min, max := setup.MinKeycode, setup.MaxKeycode
	r, err := xproto.GetKeyboardMapping(b.conn, min, byte(max-min+1)).Reply()
	if err != nil {
		return nil, xerr("GetKeyboardMapping", err)
	}
	km := &keymap{min: min, max: max, per: int(r.KeysymsPerKeycode), syms: r.Keysyms, levels: 2}
	mods, err := xproto.GetModifierMapping(b.conn).Reply()
	if err != nil {
		return nil, xerr("GetModifierMapping", err)
	}
	if km.per >= 4 {
		if km.modeSwitch = modeSwitchKeycode(km, mods); km.modeSwitch != 0 {
			km.levels = 4
		}
	}
	for kc := int(min); kc <= int(max); kc++ {
		// Keycode 8 is skipped: some clients treat the lowest keycode specially.
		if kc == 8 || slices.Contains(mods.Keycodes, xproto.Keycode(kc)) {
			continue
		}
		if _, remapped := b.remap.orig[xproto.Keycode(kc)]; remapped || km.empty(xproto.Keycode(kc)) {
			km.spare = append(km.spare, xproto.Keycode(kc))
		}
	}
	return km, nil
}

// modeSwitchKeycode returns a keycode whose first keysym is Mode_switch and which is bound
// to one of Mod1–Mod5, or 0. Held, it selects the second group of every key: core columns
// 2 and 3 (X11 protocol, "Keyboards"; on an XKB server the key's SetGroup action, and a key
// with one group keeps typing its first).
func modeSwitchKeycode(km *keymap, mods *xproto.GetModifierMappingReply) xproto.Keycode {
	per := int(mods.KeycodesPerModifier)
	for mod := 3; mod < 8 && per > 0; mod++ { // Shift, Lock and Control are 0–2
		for _, kc := range mods.Keycodes[mod*per : (mod+1)*per] {
			if kc != 0 && kc >= km.min && kc <= km.max && km.row(kc)[0] == ksModeSwitch {
				return kc
			}
		}
	}
	return 0
}

func (km *keymap) row(kc xproto.Keycode) []xproto.Keysym {
	i := int(kc-km.min) * km.per
	return km.syms[i : i+km.per]
}

func (km *keymap) empty(kc xproto.Keycode) bool {
	for _, s := range km.row(kc) {
		if s != 0 {
			return false
		}
	}
	return true
}

// lookup finds a keycode that produces ks in column 0 (no shift) or 1 (shift).
func (km *keymap) lookup(ks xproto.Keysym) (kc xproto.Keycode, shift bool, ok bool) {
	if km == nil {
		return 0, false, false
	}
	for col := 0; col < min(2, km.per); col++ {
		for k := int(km.min); k <= int(km.max); k++ {
			if km.syms[(k-int(km.min))*km.per+col] == ks {
				return xproto.Keycode(k), col == 1, true
			}
		}
	}
	// Letters: a row with only the lower case also gives the upper case with shift.
	if lower, isUpper := upperToLower(ks); isUpper {
		if kc, sh, ok := km.lookup(lower); ok && !sh && km.row(kc)[1%km.per] == 0 {
			return kc, true, true
		}
	}
	return 0, false, false
}

func upperToLower(ks xproto.Keysym) (xproto.Keysym, bool) {
	if (ks >= 'A' && ks <= 'Z') || (ks >= 0xc0 && ks <= 0xde && ks != 0xd7) {
		return ks + 0x20, true
	}
	return 0, false
}

// slot is where a remapped keysym lives: a keycode, whether Shift selects it, and whether
// it is in the second group (typed holding keymap.modeSwitch).
type slot struct {
	kc     xproto.Keycode
	shift  bool
	group2 bool
}

// capacity is how many symbols one batch can remap with levels per spare keycode.
func (km *keymap) capacity(levels int) int { return levels * len(km.spare) }

// remapLocked maps the keysyms in syms to spare keycodes, up to levels (2, or 4 when
// km.levels is 4) per keycode, with one ChangeKeyboardMapping request per keycode (see
// layoutRemap). It returns each keysym's slot.
// Preconditions: input semaphore held; len(syms) <= km.capacity(levels); levels is 2 or
// km.levels.
func (b *Backend) remapLocked(km *keymap, syms []xproto.Keysym, levels int) (map[xproto.Keysym]slot, error) {
	if len(syms) > km.capacity(levels) || km.per < 2 || levels > km.levels {
		return nil, fmt.Errorf("%w: %d symbols, %d spare keycodes", ErrNoKeycode, len(syms), len(km.spare))
	}
	if b.remap.orig == nil {
		b.remap.orig = map[xproto.Keycode][]xproto.Keysym{}
	}
	b.remap.per = km.per
	rows, order, out := layoutRemap(km, syms)
	for _, kc := range order {
		if _, saved := b.remap.orig[kc]; !saved {
			b.remap.orig[kc] = slices.Clone(km.row(kc))
		}
		xproto.ChangeKeyboardMapping(b.conn, 1, kc, byte(km.per), rows[kc])
		copy(km.row(kc), rows[kc])
	}
	return out, nil
}

// layoutRemap places syms on km's spare keycodes in order: the first group (columns 0 and
// 1, plain and Shift) of every spare keycode first, so text that fits there never holds
// Mode_switch, then the second group (columns 2 and 3). A symbol alone in its group is
// also put on the shifted level. It returns the new rows, their keycodes in order,
// and each symbol's slot.
func layoutRemap(km *keymap, syms []xproto.Keysym) (map[xproto.Keycode][]xproto.Keysym, []xproto.Keycode, map[xproto.Keysym]slot) {
	rows := map[xproto.Keycode][]xproto.Keysym{}
	var order []xproto.Keycode
	out := make(map[xproto.Keysym]slot, len(syms))
	base := 2 * len(km.spare) // symbols in the first group
	for i, ks := range syms {
		group2 := i >= base
		j := i
		if group2 {
			j -= base
		}
		kc := km.spare[j/2]
		row, ok := rows[kc]
		if !ok {
			row = make([]xproto.Keysym, km.per)
			rows[kc] = row
			order = append(order, kc)
		}
		col := j % 2
		if group2 {
			col += 2
		}
		row[col] = ks
		if col%2 == 0 {
			row[col+1] = ks // until a second symbol comes, Shift types the same
		}
		out[ks] = slot{kc: kc, shift: j%2 == 1, group2: group2}
	}
	return rows, order, out
}

// restoreKeymapLocked puts back every remapped keycode. Preconditions: input semaphore held.
func (b *Backend) restoreKeymapLocked() {
	if len(b.remap.orig) == 0 {
		return
	}
	for kc, row := range b.remap.orig {
		xproto.ChangeKeyboardMapping(b.conn, 1, kc, byte(b.remap.per), row)
	}
	clear(b.remap.orig)
	_ = b.sync()
}

// KeyboardMapping returns the server's current core keyboard mapping: keysyms per keycode
// and the keysyms of keycodes min..max. Tests compare it before and after typing.
func (b *Backend) KeyboardMapping() (per int, syms []uint32, err error) {
	setup := xproto.Setup(b.conn)
	r, err := xproto.GetKeyboardMapping(b.conn, setup.MinKeycode, byte(setup.MaxKeycode-setup.MinKeycode+1)).Reply()
	if err != nil {
		return 0, nil, xerr("GetKeyboardMapping", err)
	}
	syms = make([]uint32, len(r.Keysyms))
	for i, s := range r.Keysyms {
		syms[i] = uint32(s)
	}
	return int(r.KeysymsPerKeycode), syms, nil
}
