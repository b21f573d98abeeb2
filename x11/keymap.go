package x11

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// keymap is a snapshot of the server's core keyboard mapping.
type keymap struct {
	min, max xproto.Keycode
	per      int
	syms     []xproto.Keysym // (kc-min)*per + column
	spare    []xproto.Keycode
}

// remapState remembers keycodes this backend remapped and their original rows, to restore.
// Guarded by the input semaphore.
type remapState struct {
	orig map[xproto.Keycode][]xproto.Keysym
	per  int
	// conns are the connections whose keyboards carry the remapped rows: the backend's
	// (the core keyboard) and those of seats that typed (their own keyboards).
	conns map[*xgb.Conn]bool
	// due is when the remapped rows may be restored: clients have had the time to handle
	// the keys typed with them. timer restores them then, unless typing restored them first.
	due   time.Time
	timer *time.Timer
	// lastKey is when any of the backend's keyboards last sent a key: rows are put back
	// only once typing has paused (restoreLaterLocked).
	lastKey time.Time
}

// loadKeymapLocked reads the current mapping. Preconditions: input semaphore held.
func (b *Backend) loadKeymapLocked() (*keymap, error) {
	setup := xproto.Setup(b.conn)
	min, max := setup.MinKeycode, setup.MaxKeycode
	r, err := xproto.GetKeyboardMapping(b.conn, min, byte(max-min+1)).Reply()
	if err != nil {
		return nil, xerr("GetKeyboardMapping", err)
	}
	km := &keymap{min: min, max: max, per: int(r.KeysymsPerKeycode), syms: r.Keysyms}
	mods, err := xproto.GetModifierMapping(b.conn).Reply()
	if err != nil {
		return nil, xerr("GetModifierMapping", err)
	}
	var vendor []xproto.Keycode
	for kc := int(min); kc <= int(max); kc++ {
		// Keycode 8 is skipped: some clients treat the lowest keycode specially.
		if kc == 8 || slices.Contains(mods.Keycodes, xproto.Keycode(kc)) {
			continue
		}
		switch _, remapped := b.remap.orig[xproto.Keycode(kc)]; {
		case remapped || km.empty(xproto.Keycode(kc)):
			km.spare = append(km.spare, xproto.Keycode(kc))
		case km.rare(xproto.Keycode(kc)):
			vendor = append(vendor, xproto.Keycode(kc))
		}
	}
	// Empty keycodes first; keys of rarely pressed vendor functions only when a text needs
	// more symbols than the empty ones hold, so that all of them are mapped at once.
	km.spare = append(km.spare, vendor...)
	return km, nil
}

// Vendor keysyms (XF86…) and those of them a person may well press while an agent types:
// volume, media, brightness, power. Those are never borrowed.
const (
	vendorFirst xproto.Keysym = 0x1008ff00
	vendorLast  xproto.Keysym = 0x1008ffff
)

var vendorKept = map[xproto.Keysym]bool{
	0x1008ff02: true, 0x1008ff03: true, 0x1008ff05: true, 0x1008ff06: true, // brightness
	0x1008ff11: true, 0x1008ff12: true, 0x1008ff13: true, // volume, mute
	0x1008ff14: true, 0x1008ff15: true, 0x1008ff16: true, 0x1008ff17: true, 0x1008ff31: true, // media
	0x1008ff2a: true, 0x1008ff2b: true, 0x1008ff2d: true, 0x1008ff2f: true, // power, wake, lock, sleep
	0x1008ffa7: true, 0x1008ffa8: true, 0x1008ffb2: true, // suspend, hibernate, mic mute
}

// rare reports whether kc carries only vendor function keysyms (XF86…) that a person is
// unlikely to press during the few milliseconds it is borrowed.
func (km *keymap) rare(kc xproto.Keycode) bool {
	seen := false
	for _, s := range km.row(kc) {
		switch {
		case s == 0:
		case s >= vendorFirst && s <= vendorLast && !vendorKept[s]:
			seen = true
		default:
			return false
		}
	}
	return seen
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

// slot is where a remapped keysym lives: a keycode, and whether Shift selects it.
type slot struct {
	kc    xproto.Keycode
	shift bool
}

// capacity is how many symbols one batch can remap: two per spare keycode (columns 0 and 1).
func (km *keymap) capacity() int { return 2 * len(km.spare) }

// halfCapacity is how many symbols one half of the spare keycodes holds (halfSpare).
func (km *keymap) halfCapacity() int { return 2 * (len(km.spare) / 2) }

// halfSpare is half h (0 or 1) of the spare keycodes, each len(spare)/2 long.
func (km *keymap) halfSpare(h int) []xproto.Keycode {
	n := len(km.spare) / 2
	return km.spare[h*n : h*n+n]
}

// remapLocked maps the keysyms in syms to the keycodes spare (km's, or half of them): two
// per keycode, the second typed with Shift, or with single one per keycode, typed without
// Shift. It sends one ChangeKeyboardMapping request per run of consecutive keycodes (every
// request makes every client and the window manager re-read the mapping), on the core
// keyboard and, for a seat's devices d, on the seat's keyboard too (the clients it adopted
// read that one), and waits until the server applied them. Rows an earlier call remapped
// change only once clients had their time with them (awaitDueLocked). It returns each
// keysym's slot. Preconditions: input semaphore held; len(syms) <= 2*len(spare) (single:
// len(spare)).
func (b *Backend) remapLocked(ctx context.Context, d *Devices, km *keymap, spare []xproto.Keycode, syms []xproto.Keysym, single bool) (map[xproto.Keysym]slot, error) {
	per := 2 // symbols per keycode
	if single {
		per = 1
	}
	if len(syms) > per*len(spare) || km.per < 2 {
		return nil, fmt.Errorf("%w: %d symbols, %d spare keycodes", ErrNoKeycode, len(syms), len(spare))
	}
	if err := b.awaitDueLocked(ctx); err != nil {
		return nil, err
	}
	if b.remap.orig == nil {
		b.remap.orig = map[xproto.Keycode][]xproto.Keysym{}
		b.remap.conns = map[*xgb.Conn]bool{}
	}
	b.remap.per = km.per
	conns := []*xgb.Conn{b.conn}
	if d.seat != nil {
		conns = append(conns, d.conn)
	}
	for _, c := range conns {
		b.remap.conns[c] = true
	}
	out := make(map[xproto.Keysym]slot, len(syms))
	changed := make([]xproto.Keycode, 0, (len(syms)+1)/2)
	for i := 0; i < len(syms); i += per {
		kc := spare[i/per]
		if _, saved := b.remap.orig[kc]; !saved {
			b.remap.orig[kc] = slices.Clone(km.row(kc))
		}
		row := km.row(kc)
		clear(row)
		row[0], row[1] = syms[i], syms[i]
		out[syms[i]] = slot{kc: kc}
		if !single && i+1 < len(syms) {
			row[1] = syms[i+1]
			out[syms[i+1]] = slot{kc: kc, shift: true}
		}
		changed = append(changed, kc)
	}
	for _, c := range conns {
		writeRows(c, km.per, changed, km.row)
	}
	for _, c := range conns {
		if err := syncConn(c); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// writeRows sends the rows of keycodes kcs (row gives each) to connection c's keyboard, one
// ChangeKeyboardMapping request per run of consecutive keycodes.
func writeRows(c *xgb.Conn, per int, kcs []xproto.Keycode, row func(xproto.Keycode) []xproto.Keysym) {
	kcs = slices.Clone(kcs)
	slices.Sort(kcs)
	for i := 0; i < len(kcs); {
		j := i + 1
		for j < len(kcs) && kcs[j] == kcs[j-1]+1 {
			j++
		}
		syms := make([]xproto.Keysym, 0, (j-i)*per)
		for _, kc := range kcs[i:j] {
			syms = append(syms, row(kc)...)
		}
		xproto.ChangeKeyboardMapping(c, byte(j-i), kcs[i], byte(per), syms)
		i = j
	}
}

// remapped reports whether keycode kc holds a row a call remapped and has not restored.
// Preconditions: input semaphore held.
func (b *Backend) remapped(kc xproto.Keycode) bool {
	_, ok := b.remap.orig[kc]
	return ok
}

// remapHold is how long remapped rows stay after the last key typed with them when no
// later typing needs their keycodes, and how long they stay at least when the client the
// keys went to did not say it has read them (it does not answer _NET_WM_PING, or not in
// time). Clients read the mapping lazily: Xlib notes a mapping change when it reads the
// notification off the connection and fetches the rows only when it translates the next
// key, so a client still busy with earlier events (a GTK4 or Chromium window that has
// just mapped; xterm loading the fallback fonts of the first non-Latin glyphs) that reads
// the restore's notification before it gets to the keys translates them with the restored
// rows and loses the characters. The keycodes are spare ones, so keeping their rows a
// little longer costs nobody a key.
const remapHold = time.Second

// unreadIdle is how long remapped rows stay, when no later typing needs their keycodes,
// after keys the client did not say it has read: it may be slower still (xterm drawing
// the first glyphs of a script from fallback fonts), and the rows of spare keycodes cost
// nobody a key. Typing that needs the keycodes for other symbols reuses them after
// holdFor; Close puts them back.
const unreadIdle = 10 * time.Second

// holdFor is how long the rows used for keys keys stay after them: RemapSettle plus
// settlePerKey each once the client has read them (read), remapHold plus settlePerKey each
// when nothing says it has.
func (b *Backend) holdFor(keys int, read bool) time.Duration {
	hold := b.settle
	if !read {
		hold = max(hold, remapHold)
	}
	return hold + time.Duration(keys)*settlePerKey
}

// restoreLaterLocked notes that the remapped keycodes may change again (be reused, or
// restored) once clients had the time to handle the keys keys typed with them (holdFor;
// read: the client they went to said it has read them), and arranges for them to be
// restored once that time has passed and no key was typed for remapHold (unreadIdle after
// keys nobody confirmed), unless later typing changes them first: the call that typed
// returns at once. Restoring between the calls of a typing agent would make every client
// refetch its mapping while the next keys are in flight. Preconditions: input semaphore
// held.
func (b *Backend) restoreLaterLocked(keys int, read bool) {
	delay := b.holdFor(keys, read)
	b.remap.due = time.Now().Add(delay)
	idle := b.holdFor(keys, false)
	if !read {
		idle = max(idle, unreadIdle)
	}
	b.armRestoreLocked(max(delay, idle), idle)
}

// armRestoreLocked (re)starts the timer that restores the remapped rows after wait, once
// they are due and no key was typed for idle. Preconditions: input semaphore held.
func (b *Backend) armRestoreLocked(wait, idle time.Duration) {
	if b.remap.timer != nil {
		b.remap.timer.Stop()
	}
	b.remap.timer = time.AfterFunc(wait, func() {
		select {
		case b.input <- struct{}{}:
		case <-b.done:
			return
		}
		defer b.unlockInput()
		if b.closed() || len(b.remap.orig) == 0 {
			return
		}
		if left := max(time.Until(b.remap.due), idle-time.Since(b.remap.lastKey)); left > 0 {
			b.armRestoreLocked(left, idle)
			return
		}
		b.restoreKeymapLocked()
	})
}

// awaitDueLocked waits until keycodes remapped by an earlier call may change meaning:
// clients have had RemapSettle to handle the keys typed with them. Preconditions: input
// semaphore held.
func (b *Backend) awaitDueLocked(ctx context.Context) error {
	if len(b.remap.orig) == 0 {
		return nil
	}
	if wait := time.Until(b.remap.due); wait > 0 {
		return sleepCtx(ctx, wait)
	}
	return nil
}

// restoreWhenDueLocked restores remapped keycodes now when clients have had their time
// with them, and otherwise leaves it to the timer restoreLaterLocked set (setting one when
// none is running): a client that has not yet read a key typed with a remapped keycode
// would read it with the restored row and lose it. Preconditions: input semaphore held.
func (b *Backend) restoreWhenDueLocked() {
	switch {
	case len(b.remap.orig) == 0:
	case !time.Now().Before(b.remap.due):
		b.restoreKeymapLocked()
	case b.remap.timer == nil:
		b.restoreLaterLocked(0, true)
	}
}

// restoreDueLocked waits until remapped keycodes may be restored, then restores them.
// Preconditions: input semaphore held.
func (b *Backend) restoreDueLocked(ctx context.Context) error {
	if len(b.remap.orig) == 0 {
		return nil
	}
	if wait := time.Until(b.remap.due); wait > 0 {
		if err := sleepCtx(ctx, wait); err != nil {
			return err
		}
	}
	b.restoreKeymapLocked()
	return nil
}

// restoreKeymapLocked puts back every remapped keycode now. Preconditions: input semaphore
// held.
func (b *Backend) restoreKeymapLocked() {
	if b.remap.timer != nil {
		b.remap.timer.Stop()
		b.remap.timer = nil
	}
	if len(b.remap.orig) == 0 {
		return
	}
	kcs := slices.Collect(maps.Keys(b.remap.orig))
	for c := range b.remap.conns {
		writeRows(c, b.remap.per, kcs, func(kc xproto.Keycode) []xproto.Keysym { return b.remap.orig[kc] })
		_ = syncConn(c) // a closed seat's connection answers at once
	}
	clear(b.remap.orig)
	clear(b.remap.conns)
}

// copyKeymapLocked gives the keyboard of connection c (a seat's) the core keyboard's
// mapping, so that the clients a seat adopts, which read its keyboard's mapping, read the
// same symbols for its keycodes as everyone else. Preconditions: input semaphore held.
func (b *Backend) copyKeymapLocked(ctx context.Context, c *xgb.Conn) error {
	if err := b.restoreDueLocked(ctx); err != nil {
		return err
	}
	km, err := b.loadKeymapLocked()
	if err != nil {
		return err
	}
	n := int(km.max-km.min) + 1
	xproto.ChangeKeyboardMapping(c, byte(n), km.min, byte(km.per), km.syms[:n*km.per])
	return syncConn(c)
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
