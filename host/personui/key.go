package personui

import (
	"fmt"
	"slices"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/internal/xinput2"
)

// StopKey is the key combination that presses Stop from the keyboard.
//
// Escape with Ctrl, Alt and Shift: Escape is on every keyboard and in every keymap at the
// same place; none of GNOME, KDE Plasma, Xfce, MATE, Cinnamon and openbox binds it with
// these three modifiers by default (Ctrl+Alt+Esc is KDE's xkill, Ctrl+Shift+Esc the task
// manager's, Alt+Esc a window switcher's), and three modifiers make it hard to press by
// accident while still one hand's reach.
const StopKey = "Ctrl+Alt+Shift+Esc"

const (
	keysymEscape = 0xff1b
	stopMods     = xproto.ModMaskControl | xproto.ModMask1 | xproto.ModMaskShift
)

// lockMods are modifiers whose state must not matter: Caps Lock, Num Lock (Mod2 in the
// usual maps), and Mod3 and Mod5, which some maps use for Scroll Lock or level shifts.
var lockMods = []uint32{xproto.ModMaskLock, xproto.ModMask2, xproto.ModMask3, xproto.ModMask5}

// stopModifiers returns stopMods with every combination of lockMods.
func stopModifiers() []uint32 {
	out := make([]uint32, 0, 1<<len(lockMods))
	for i := range 1 << len(lockMods) {
		m := uint32(stopMods)
		for j, l := range lockMods {
			if i&(1<<j) != 0 {
				m |= l
			}
		}
		out = append(out, m)
	}
	return out
}

// grabStopKey sets up the stop key on the root for every master keyboard, as an XI2
// passive grab: its events name their source device, so the input rule applies to the key
// as to a click. It returns false and why when the key cannot be had: no keycode for
// Escape, or another client grabbed the combination (under any lock state) first — then it
// holds none of it.
func (s *surface) grabStopKey() (ok bool, why string) {
	kcs, err := keycodesOf(s.c.x, keysymEscape)
	if err != nil {
		return false, fmt.Sprintf("read the keyboard map: %v", err)
	}
	if len(kcs) == 0 {
		return false, "the keyboard map has no Escape key"
	}
	root, mods := s.c.screen.Root, stopModifiers()
	// The XI2 grab request does not see another client's core grab of the same key (X.Org
	// 21.1 grants both, and the core one wins), so take the core grab first — the server
	// refuses it with BadAccess when another client holds the combination — then let it go
	// and take the XI2 one.
	for _, kc := range kcs {
		var held error
		for _, m := range mods {
			if err := xproto.GrabKeyChecked(s.c.x, true, root, uint16(m), xproto.Keycode(kc),
				xproto.GrabModeAsync, xproto.GrabModeAsync).Check(); err != nil && held == nil {
				held = err
			}
		}
		for _, m := range mods {
			xproto.UngrabKey(s.c.x, xproto.Keycode(kc), root, uint16(m))
		}
		if held != nil {
			return false, fmt.Sprintf("another program holds %s (%v)", StopKey, held)
		}
	}
	mask := xinput2.Mask(xinput2.EventKeyPress, xinput2.EventKeyRelease)
	for i, kc := range kcs {
		failed, err := xinput2.GrabKeycode(s.c.x, root, kc, xinput2.AllMasterDevices, mods, mask)
		if err == nil && len(failed) > 0 {
			err = fmt.Errorf("another program holds it under modifiers 0x%x (status %d)", failed[0].Modifiers, failed[0].Status)
		}
		if err != nil {
			for _, k := range kcs[:i+1] {
				_ = xinput2.UngrabKeycode(s.c.x, root, k, xinput2.AllMasterDevices, mods)
			}
			return false, fmt.Sprintf("grab %s: %v", StopKey, err)
		}
	}
	s.stopKeycodes = kcs
	return true, ""
}

// regrabStopKey follows a change of the keyboard map: when Escape moved, it lets the old
// keycodes go and grabs the new ones.
func (s *surface) regrabStopKey() (ok bool, why string) {
	s.keymapChanged = false
	kcs, err := keycodesOf(s.c.x, keysymEscape)
	if err == nil && slices.Equal(kcs, s.stopKeycodes) {
		return true, ""
	}
	s.ungrabStopKey()
	return s.grabStopKey()
}

// ungrabStopKey lets the stop key go.
func (s *surface) ungrabStopKey() {
	for _, kc := range s.stopKeycodes {
		_ = xinput2.UngrabKeycode(s.c.x, s.c.screen.Root, kc, xinput2.AllMasterDevices, stopModifiers())
	}
	s.stopKeycodes = nil
}

// keycodesOf returns the keycodes whose first keysym is sym.
func keycodesOf(x *xgb.Conn, sym xproto.Keysym) ([]byte, error) {
	setup := xproto.Setup(x)
	first, n := setup.MinKeycode, int(setup.MaxKeycode)-int(setup.MinKeycode)+1
	r, err := xproto.GetKeyboardMapping(x, first, byte(n)).Reply()
	if err != nil {
		return nil, err
	}
	per := int(r.KeysymsPerKeycode)
	var out []byte
	for i := 0; per > 0 && i < n && (i+1)*per <= len(r.Keysyms); i++ {
		if r.Keysyms[i*per] == sym {
			out = append(out, byte(int(first)+i))
		}
	}
	return out, nil
}

// stopHint is what the indicator says about Stop after the session list.
func stopHint(keyOK bool) string {
	if keyOK {
		return "   Stop: click or " + StopKey
	}
	return "   Stop: click only (" + StopKey + " unavailable)"
}
