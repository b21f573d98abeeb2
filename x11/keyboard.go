package x11

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jezek/xgb/xproto"
)

// TypeStats describes how TypeText delivered text.
type TypeStats struct {
	// Runes is the number of characters typed.
	Runes int `json:"chars"`
	// Remapped is the number of distinct symbols the keymap lacked and that were typed
	// through temporarily remapped spare keycodes.
	Remapped int `json:"remapped_symbols"`
	// Batches is the number of keymap batches (1 when nothing or little was remapped).
	Batches int `json:"batches"`
	// SettleMS is how long the first keys into a program this backend launched waited for
	// its window to be still (see settleFocusLocked); 0 when they did not wait.
	SettleMS int64 `json:"settle_wait_ms,omitempty"`
}

// TypeText types text into whatever has the keyboard focus, in order and at full speed.
// Characters the keymap lacks are typed through spare keycodes: each distinct missing
// symbol of a batch gets its own keycode, other clients get RemapSettle to catch up with
// a mapping before a keycode is reused, and the original mapping is restored at the end.
// Newline types Return and tab types Tab; other control characters are refused. Guards
// run before the first key and before any keycode is remapped (see Guard). The first keys
// into a program this backend launched wait, before the guards, until its window is
// still (settleFocusLocked; TypeStats.SettleMS).
func (d *Devices) TypeText(ctx context.Context, text string, guards ...Guard) (stats TypeStats, err error) {
	return d.typeText(ctx, text, false, guards)
}

// TypeTextUnshifted types text like TypeText without ever pressing Shift: every character
// that needs Shift in the keymap (capitals, most punctuation) is typed through a spare
// keycode that holds it alone, as characters the keymap lacks are. It is for clients that
// read the modifiers of the core keyboard rather than of the keyboard that sent the keys
// (Qt 5 under XKB): the session keyboard's Shift never reaches them.
func (d *Devices) TypeTextUnshifted(ctx context.Context, text string, guards ...Guard) (stats TypeStats, err error) {
	return d.typeText(ctx, text, true, guards)
}

func (d *Devices) typeText(ctx context.Context, text string, unshifted bool, guards []Guard) (stats TypeStats, err error) {
	if !utf8.ValidString(text) {
		return stats, fmt.Errorf("%w: text is not valid UTF-8", ErrInvalidArgument)
	}
	syms := make([]xproto.Keysym, 0, len(text))
	for _, r := range text {
		if unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' {
			return stats, fmt.Errorf("%w: control character %U cannot be typed", ErrInvalidArgument, r)
		}
		if r == '\r' {
			continue // "\r\n" types one Return
		}
		syms = append(syms, RuneKeysym(r))
	}
	return d.typeSyms(ctx, syms, unshifted, guards)
}

// TypeSecret types secret like TypeText, for text that must leave no copy behind: it never
// becomes a string, the keysyms it is turned into are zeroed before TypeSecret returns,
// and no error names a character of it (ErrInvalidArgument and ErrNoKeycode say only
// that some character could not be typed). The caller keeps ownership of secret and
// zeroes it.
func (d *Devices) TypeSecret(ctx context.Context, secret []byte, guards ...Guard) (stats TypeStats, err error) {
	if !utf8.Valid(secret) {
		return stats, fmt.Errorf("%w: the text is not valid UTF-8", ErrInvalidArgument)
	}
	syms := make([]xproto.Keysym, 0, len(secret))
	defer func() { clear(syms[:cap(syms)]) }()
	for i := 0; i < len(secret); {
		r, n := utf8.DecodeRune(secret[i:])
		i += n
		if unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' {
			return stats, fmt.Errorf("%w: the text has a control character that cannot be typed", ErrInvalidArgument)
		}
		if r == '\r' {
			continue
		}
		syms = append(syms, RuneKeysym(r))
	}
	stats, err = d.typeSyms(ctx, syms, false, guards)
	if errors.Is(err, ErrNoKeycode) {
		err = fmt.Errorf("%w: a character of the text has no keycode and none could be mapped", ErrNoKeycode)
	}
	return stats, err
}

// typeSyms types syms for TypeText and TypeSecret. The batches it plans share no memory
// that outlives it: their keysyms are zeroed before it returns.
func (d *Devices) typeSyms(ctx context.Context, syms []xproto.Keysym, unshifted bool, guards []Guard) (stats TypeStats, err error) {
	if err := d.lock(ctx); err != nil {
		return stats, err
	}
	defer d.b.unlockInput()
	stats.SettleMS = d.settleFocusLocked(ctx).Milliseconds()
	if err := runGuards(ctx, guards); err != nil {
		return stats, err
	}
	defer func() {
		if err != nil {
			d.releaseHeldLocked()
		}
	}()
	km, err := d.b.freshKeymapLocked(ctx, syms)
	if err != nil {
		return stats, err
	}
	shiftKC, _, haveShift := km.lookup(ksShiftL)
	batches, err := planBatches(km, syms, unshifted)
	defer func() {
		for _, bt := range batches {
			clear(bt.syms[:cap(bt.syms)])
			clear(bt.missing[:cap(bt.missing)])
		}
	}()
	if err != nil {
		return stats, err
	}
	remapped := false
	sent := 0    // keys typed through remapped keycodes since the last remap
	viaKept := 0 // keys typed through rows an earlier call remapped (freshKeymapLocked)
	for _, bt := range batches {
		codes := map[xproto.Keysym]slot{}
		if len(bt.missing) > 0 {
			if remapped {
				// Let clients read the previous mapping for the keys already sent: a
				// keycode is about to change meaning, and a client that has not yet
				// handled the keys typed with it would read them with the new one.
				if err := d.settleLocked(ctx, sent); err != nil {
					return stats, err
				}
				sent = 0
			}
			spare := km.spare
			if bt.halves {
				spare = km.halfSpare(bt.half)
			}
			if codes, err = d.b.remapLocked(ctx, d, km, spare, bt.missing, unshifted); err != nil {
				return stats, err
			}
			if err := d.sync(); err != nil {
				return stats, err
			}
			if err := d.leadLocked(ctx); err != nil {
				return stats, err
			}
			remapped = true
			stats.Remapped += len(bt.missing)
		}
		stats.Batches++
		shiftDown := false
		for i, ks := range bt.syms {
			if i%64 == 0 {
				if err := ctx.Err(); err != nil {
					return stats, err
				}
			}
			kc, shift, ok := xproto.Keycode(0), false, false
			if c, mapped := codes[ks]; mapped {
				kc, shift, ok = c.kc, c.shift, true
				sent++
			} else if kc, shift, ok = km.lookup(ks); ok && d.b.remapped(kc) {
				viaKept++
			}
			if !ok {
				return stats, fmt.Errorf("%w: no keycode for %s", ErrNoKeycode, KeysymName(ks))
			}
			if shift && !haveShift {
				return stats, fmt.Errorf("%w: %s needs Shift, which has no keycode", ErrNoKeycode, KeysymName(ks))
			}
			if shift != shiftDown {
				d.keyLocked(shiftKC, shift)
				shiftDown = shift
			}
			d.keyLocked(kc, true)
			d.keyLocked(kc, false)
			stats.Runes++
		}
		if shiftDown {
			d.keyLocked(shiftKC, false)
		}
		if err := d.sync(); err != nil {
			return stats, err
		}
	}
	if remapped || viaKept > 0 {
		// The rows stay until clients had the time to read every key typed with them.
		d.b.restoreLaterLocked(sent+viaKept, d.focusReadLocked(ctx))
	}
	return stats, nil
}

// PressCombo presses the combination's modifiers in order, then its keys, and releases
// them in reverse order. Keys that need Shift (e.g. "?") get it added; keys the keymap
// lacks are remapped for the duration. Guards run before the first key and before any
// keycode is remapped (see Guard); the first keys into a program this backend launched
// wait before them, as TypeText's do.
func (d *Devices) PressCombo(ctx context.Context, combo KeyCombo, guards ...Guard) (err error) {
	if len(combo.Mods)+len(combo.Keys) == 0 {
		return fmt.Errorf("%w: empty key combination", ErrInvalidArgument)
	}
	if err := d.lock(ctx); err != nil {
		return err
	}
	defer d.b.unlockInput()
	d.settleFocusLocked(ctx)
	if err := runGuards(ctx, guards); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			d.releaseHeldLocked()
		}
	}()
	all := append(slices.Clone(combo.Mods), combo.Keys...)
	km, err := d.b.freshKeymapLocked(ctx, all)
	if err != nil {
		return err
	}
	var missing []xproto.Keysym
	for _, ks := range all {
		if _, _, ok := km.lookup(ks); !ok && !slices.Contains(missing, ks) {
			missing = append(missing, ks)
		}
	}
	codes := map[xproto.Keysym]slot{}
	if len(missing) > 0 {
		if codes, err = d.b.remapLocked(ctx, d, km, km.spare, missing, false); err != nil {
			return err
		}
		if err := d.sync(); err != nil {
			return err
		}
		if err := d.leadLocked(ctx); err != nil {
			return err
		}
	}
	code := func(ks xproto.Keysym) (xproto.Keycode, bool) {
		if c, ok := codes[ks]; ok {
			return c.kc, c.shift
		}
		c, shift, _ := km.lookup(ks)
		return c, shift
	}
	var held []xproto.Keycode
	press := func(kc xproto.Keycode) {
		d.keyLocked(kc, true)
		held = append(held, kc)
	}
	needShift := false
	for _, ks := range combo.Keys {
		if _, shift := code(ks); shift {
			needShift = true
		}
	}
	if needShift && !slices.Contains(combo.Mods, ksShiftL) {
		if kc, _, ok := km.lookup(ksShiftL); ok {
			press(kc)
		}
	}
	for _, ks := range combo.Mods {
		kc, _ := code(ks)
		press(kc)
	}
	for _, ks := range combo.Keys {
		kc, _ := code(ks)
		press(kc)
	}
	for i := len(held) - 1; i >= 0; i-- {
		d.keyLocked(held[i], false)
	}
	if err := d.sync(); err != nil {
		return err
	}
	if len(missing) > 0 {
		d.b.restoreLaterLocked(len(held), d.focusReadLocked(ctx))
	}
	return nil
}

// freshKeymapLocked reads the mapping for typing syms. Rows an earlier call remapped stay
// on the server (a client may not have read them yet: remapHold). In the snapshot, a
// remapped row that holds one of syms stays as it is: those symbols are typed through the
// same keycodes again, so a client still reading earlier keys typed with them (it fetches
// the mapping lazily, when it gets to them: a terminal drawing glyphs from fallback fonts
// lags by hundreds of milliseconds) reads them with the mapping they were typed with,
// not a new one. Other remapped rows are blank: their keycodes are spare, used after the
// keycodes no call remapped, so no keycode is used for two symbols at once and a keycode
// changes meaning as rarely as it can.
func (b *Backend) freshKeymapLocked(ctx context.Context, syms []xproto.Keysym) (*keymap, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	km, err := b.loadKeymapLocked()
	if err != nil {
		return nil, err
	}
	kept := map[xproto.Keycode]bool{}
	for kc := range b.remap.orig {
		row := km.row(kc)
		if slices.ContainsFunc(row[:min(2, len(row))], func(ks xproto.Keysym) bool { return ks != 0 && slices.Contains(syms, ks) }) {
			kept[kc] = true
			continue
		}
		clear(row)
	}
	var fresh, reused, vendor []xproto.Keycode
	for _, kc := range km.spare {
		_, remapped := b.remap.orig[kc]
		switch {
		case kept[kc]:
		case remapped:
			reused = append(reused, kc)
		case km.empty(kc):
			fresh = append(fresh, kc)
		default:
			vendor = append(vendor, kc)
		}
	}
	km.spare = slices.Concat(fresh, reused, vendor)
	return km, nil
}

// settlePerKey is how much longer than RemapSettle clients get per key typed with a
// mapping, to handle those keys before it changes: a client draws what it was typed.
const settlePerKey = time.Millisecond

// settleLocked waits, before remapped keycodes change meaning again, until the client the
// keys went to has handled them. It pings the client of the focused window
// (_NET_WM_PING, pingClient), whose answer comes after it read every key sent before — a
// client slowed down (a loaded machine; under metacity and fluxbox, measured) gets up
// to pingSettle — and then waits RemapSettle plus settlePerKey for each of the keys keys
// in any case: a client that answers the ping may still translate the keys later
// (Chromium hands them to a later task), and one that fetches the keyboard mapping lazily
// after a MappingNotify must have fetched it before it changes again.
func (d *Devices) settleLocked(ctx context.Context, keys int) error {
	if err := d.sync(); err != nil {
		return err
	}
	return sleepCtx(ctx, d.b.holdFor(keys, d.focusReadLocked(ctx)))
}

// focusReadLocked pings the client of the focused window (pingClient) and reports whether
// it answered within pingSettle: then it has read every key sent to it before, with the
// mapping of the moment it read them.
func (d *Devices) focusReadLocked(ctx context.Context) bool {
	f, err := d.InputFocus(ctx)
	return err == nil && f.TopLevel != 0 && d.b.pingClient(ctx, xproto.Window(f.TopLevel), pingSettle)
}

// pingSettle bounds the wait for a pinged client's answer between two batches of remapped
// keys.
const pingSettle = 2 * time.Second

// remapLead is how long keys wait after a remap when the focused client cannot be asked
// whether it has read the new mapping (it does not answer _NET_WM_PING: xterm). Measured
// under metacity with one-shot calls: xterm translated keys sent at once after the remap
// with the mapping of before in most calls, and 6 of 6 right with 50 ms between.
const remapLead = 50 * time.Millisecond

// leadLocked waits, after a remap and before the keys that use it, until the client the
// keys go to has read the MappingNotify the remap caused: a client that translates a key
// before it refetched the mapping reads the keycode's old, empty row and drops the
// character. It pings the focused window's client, whose answer comes after every event
// queued for it before the ping (the MappingNotify included), for at most pingSettle; a
// client that does not take part in the protocol gets remapLead.
func (d *Devices) leadLocked(ctx context.Context) error {
	if d.focusReadLocked(ctx) {
		return nil
	}
	return sleepCtx(ctx, remapLead)
}

type batch struct {
	syms    []xproto.Keysym
	missing []xproto.Keysym
	// halves is set when the text's batches use the halves of the spare keycodes in turn,
	// and half is this batch's (0 or 1).
	halves bool
	half   int
}

// planBatches splits syms into runs whose distinct missing symbols fit the spare keycodes.
func planBatches(km *keymap, syms []xproto.Keysym, unshifted bool) ([]batch, error) {
	var out []batch
	// A text that needs more symbols than the spare keycodes hold at once is typed in
	// batches that use the two halves of the spare keycodes in turn: a keycode changes
	// meaning only every other batch, which leaves a client that reads keys late (as some
	// do under metacity and fluxbox) a whole batch more to read the keys typed with it
	// before it does.
	// Unshifted, a keycode holds one symbol, not two.
	full, half := km.capacity(), km.halfCapacity()
	if unshifted {
		full, half = full/2, half/2
	}
	missing := func(ks xproto.Keysym) bool {
		_, shift, ok := km.lookup(ks)
		return !ok || unshifted && shift
	}
	per := full
	if distinctMissing(syms, missing) > per {
		per = half
	}
	// Each batch's slices are allocated at their final capacity, so that growing them
	// leaves no stale copy of the text behind (typeSyms zeroes them).
	cur := batch{syms: make([]xproto.Keysym, 0, len(syms)), missing: make([]xproto.Keysym, 0, per)}
	for i, ks := range syms {
		if missing(ks) && !slices.Contains(cur.missing, ks) {
			if per == 0 {
				clear(cur.syms[:cap(cur.syms)])
				return out, fmt.Errorf("%w: %s is not in the keymap and no keycode is free", ErrNoKeycode, KeysymName(ks))
			}
			if len(cur.missing) == per {
				out = append(out, cur)
				cur = batch{syms: make([]xproto.Keysym, 0, len(syms)-i), missing: make([]xproto.Keysym, 0, per), half: len(out) % 2}
			}
			cur.missing = append(cur.missing, ks)
		}
		cur.syms = append(cur.syms, ks)
	}
	if len(cur.syms) > 0 {
		out = append(out, cur)
	}
	if per != full {
		for i := range out {
			out[i].halves = true
		}
	}
	return out, nil
}

// distinctMissing counts the symbols of syms that missing says need a spare keycode, each
// once.
func distinctMissing(syms []xproto.Keysym, missing func(xproto.Keysym) bool) int {
	seen := map[xproto.Keysym]bool{}
	for _, ks := range syms {
		if missing(ks) {
			seen[ks] = true
		}
	}
	return len(seen)
}
