package x11

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jezek/xgb/xproto"
)

// Keysym values used by name. Latin-1 characters are their own keysyms; other Unicode
// characters are 0x01000000 | code point.
const (
	ksShiftL   xproto.Keysym = 0xffe1
	ksControlL xproto.Keysym = 0xffe3
	ksAltL     xproto.Keysym = 0xffe9
	ksSuperL   xproto.Keysym = 0xffeb
	ksReturn   xproto.Keysym = 0xff0d
	ksTab      xproto.Keysym = 0xff09
)

// keyNames maps lowercase key names to keysyms. Aliases follow common usage (xdotool,
// the reference driver, browsers).
var keyNames = map[string]xproto.Keysym{
	"return": 0xff0d, "enter": 0xff0d, "tab": 0xff09, "iso_left_tab": 0xfe20,
	"escape": 0xff1b, "esc": 0xff1b, "backspace": 0xff08, "delete": 0xffff, "del": 0xffff,
	"insert": 0xff63, "ins": 0xff63, "home": 0xff50, "end": 0xff57,
	"page_up": 0xff55, "pageup": 0xff55, "prior": 0xff55, "pgup": 0xff55,
	"page_down": 0xff56, "pagedown": 0xff56, "next": 0xff56, "pgdn": 0xff56,
	"left": 0xff51, "up": 0xff52, "right": 0xff53, "down": 0xff54,
	"arrowleft": 0xff51, "arrowup": 0xff52, "arrowright": 0xff53, "arrowdown": 0xff54,
	"space": 0x20, "spacebar": 0x20,
	"shift": 0xffe1, "shift_l": 0xffe1, "shift_r": 0xffe2, "lshift": 0xffe1, "rshift": 0xffe2,
	"ctrl": 0xffe3, "control": 0xffe3, "control_l": 0xffe3, "control_r": 0xffe4, "ctrl_l": 0xffe3, "ctrl_r": 0xffe4,
	"lctrl": 0xffe3, "rctrl": 0xffe4,
	"alt": 0xffe9, "alt_l": 0xffe9, "alt_r": 0xffea, "option": 0xffe9, "opt": 0xffe9, "lalt": 0xffe9, "ralt": 0xffea,
	"meta": 0xffe7, "meta_l": 0xffe7, "meta_r": 0xffe8,
	"super": 0xffeb, "super_l": 0xffeb, "super_r": 0xffec, "win": 0xffeb, "windows": 0xffeb,
	"hyper": 0xffed, "hyper_l": 0xffed,
	// cmd/command: on Linux the reference's macOS habit means Control (copy is ctrl+c).
	"cmd": 0xffe3, "command": 0xffe3,
	"caps_lock": 0xffe5, "capslock": 0xffe5, "num_lock": 0xff7f, "numlock": 0xff7f,
	"scroll_lock": 0xff14, "scrolllock": 0xff14,
	"print": 0xff61, "printscreen": 0xff61, "print_screen": 0xff61, "sys_req": 0xff15,
	"pause": 0xff13, "break": 0xff6b, "menu": 0xff67, "apps": 0xff67, "help": 0xff6a,
	"kp_enter": 0xff8d, "kp_add": 0xffab, "kp_subtract": 0xffad, "kp_multiply": 0xffaa,
	"kp_divide": 0xffaf, "kp_decimal": 0xffae, "kp_equal": 0xffbd, "kp_separator": 0xffac,
	"kp_home": 0xff95, "kp_left": 0xff96, "kp_up": 0xff97, "kp_right": 0xff98, "kp_down": 0xff99,
	"kp_page_up": 0xff9a, "kp_page_down": 0xff9b, "kp_end": 0xff9c, "kp_begin": 0xff9d,
	"kp_insert": 0xff9e, "kp_delete": 0xff9f,
	"minus": '-', "equal": '=', "plus": '+', "comma": ',', "period": '.', "dot": '.', "slash": '/',
	"backslash": '\\', "semicolon": ';', "colon": ':', "apostrophe": '\'', "quote": '\'',
	"quotedbl": '"', "grave": '`', "backtick": '`', "asciitilde": '~', "tilde": '~',
	"bracketleft": '[', "bracketright": ']', "braceleft": '{', "braceright": '}',
	"parenleft": '(', "parenright": ')', "less": '<', "greater": '>', "question": '?',
	"exclam": '!', "at": '@', "numbersign": '#', "hash": '#', "dollar": '$', "percent": '%',
	"asciicircum": '^', "ampersand": '&', "asterisk": '*', "underscore": '_', "bar": '|',
	"xf86audioraisevolume": 0x1008ff13, "volumeup": 0x1008ff13, "audiovolumeup": 0x1008ff13,
	"xf86audiolowervolume": 0x1008ff11, "volumedown": 0x1008ff11, "audiovolumedown": 0x1008ff11,
	"xf86audiomute": 0x1008ff12, "volumemute": 0x1008ff12, "mute": 0x1008ff12, "audiomute": 0x1008ff12,
	"xf86audioplay": 0x1008ff14, "mediaplaypause": 0x1008ff14, "playpause": 0x1008ff14,
	"xf86audiostop": 0x1008ff15, "mediastop": 0x1008ff15,
	"xf86audioprev": 0x1008ff16, "mediaprevioustrack": 0x1008ff16, "mediaprev": 0x1008ff16,
	"xf86audionext": 0x1008ff17, "medianexttrack": 0x1008ff17, "medianext": 0x1008ff17,
	"xf86monbrightnessup": 0x1008ff02, "xf86monbrightnessdown": 0x1008ff03,
}

func init() {
	for i := 1; i <= 35; i++ {
		keyNames["f"+strconv.Itoa(i)] = xproto.Keysym(0xffbe + i - 1)
	}
	for i := range 10 {
		keyNames["kp_"+strconv.Itoa(i)] = xproto.Keysym(0xffb0 + i)
	}
}

// modifierSyms are the keysyms that count as modifiers in a key combination.
var modifierSyms = map[xproto.Keysym]bool{
	0xffe1: true, 0xffe2: true, 0xffe3: true, 0xffe4: true, 0xffe7: true, 0xffe8: true,
	0xffe9: true, 0xffea: true, 0xffeb: true, 0xffec: true, 0xffed: true, 0xffee: true,
}

// RuneKeysym returns the keysym that types r: Latin-1 maps to itself, newline to Return,
// tab to Tab, other characters to 0x01000000|r.
func RuneKeysym(r rune) xproto.Keysym {
	switch {
	case r == '\n' || r == '\r':
		return ksReturn
	case r == '\t':
		return ksTab
	case r == '\b':
		return 0xff08
	case r == 0x1b:
		return 0xff1b
	case r >= 0x20 && r <= 0x7e, r >= 0xa0 && r <= 0xff:
		return xproto.Keysym(r)
	}
	return xproto.Keysym(0x01000000 | uint32(r))
}

// ParseKey maps one key name to its keysym: a name from the table (case-insensitive), a
// single character (a letter is taken in lower case, so "T" is the t key; hold shift
// explicitly for capitals in combinations), "U+20AC", or "0xff0d". Unknown names return
// ErrUnknownKey.
func ParseKey(name string) (xproto.Keysym, error) {
	if name == "" {
		return 0, fmt.Errorf("%w: empty key name", ErrUnknownKey)
	}
	if utf8.RuneCountInString(name) == 1 {
		r, _ := utf8.DecodeRuneInString(name)
		if r == utf8.RuneError || r < 0x20 || r == 0x7f {
			return 0, fmt.Errorf("%w: %q", ErrUnknownKey, name)
		}
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		return RuneKeysym(r), nil
	}
	low := strings.ToLower(name)
	if ks, ok := keyNames[low]; ok {
		return ks, nil
	}
	if strings.HasPrefix(low, "u+") && len(low) > 2 {
		cp, err := strconv.ParseUint(low[2:], 16, 32)
		if err == nil && cp >= 0x20 && cp <= utf8.MaxRune && utf8.ValidRune(rune(cp)) {
			return RuneKeysym(rune(cp)), nil
		}
	}
	if strings.HasPrefix(low, "0x") && len(low) > 2 {
		v, err := strconv.ParseUint(low[2:], 16, 32)
		if err == nil && v > 0 && v <= 0x1fffffff {
			return xproto.Keysym(v), nil
		}
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknownKey, name)
}

// KeyCombo is a parsed key combination: modifiers held, in order, around the keys.
type KeyCombo struct {
	Mods []xproto.Keysym
	Keys []xproto.Keysym
}

// ParseKeyCombo parses "ctrl+shift+t", "Return", "ctrl++" or "super". A combination of
// modifiers only (e.g. "super") presses and releases them. Unknown names return
// ErrUnknownKey; at most 8 keys are allowed.
func ParseKeyCombo(s string) (KeyCombo, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return KeyCombo{}, fmt.Errorf("%w: empty key combination", ErrUnknownKey)
	}
	var parts []string
	if s == "+" {
		parts = []string{"+"}
	} else {
		trailingPlus := strings.HasSuffix(s, "++")
		if trailingPlus {
			s = strings.TrimSuffix(s, "++")
		}
		parts = strings.Split(s, "+")
		// "U+2192" is one key: rejoin "U" with a following 4–6 digit hex number.
		for i := 0; i+1 < len(parts); i++ {
			if (parts[i] == "U" || parts[i] == "u") && len(parts[i+1]) >= 4 && len(parts[i+1]) <= 6 {
				if _, err := strconv.ParseUint(parts[i+1], 16, 32); err == nil {
					parts = append(parts[:i], append([]string{"U+" + parts[i+1]}, parts[i+2:]...)...)
				}
			}
		}
		if trailingPlus {
			parts = append(parts, "+")
		}
	}
	return ParseKeyList(parts)
}

// ParseKeyList parses key names, modifiers first or anywhere, into a combination.
func ParseKeyList(names []string) (KeyCombo, error) {
	if len(names) == 0 || len(names) > 8 {
		return KeyCombo{}, fmt.Errorf("%w: %d keys (want 1–8)", ErrInvalidArgument, len(names))
	}
	var kc KeyCombo
	for _, n := range names {
		ks, err := ParseKey(strings.TrimSpace(n))
		if err != nil {
			return KeyCombo{}, err
		}
		if modifierSyms[ks] {
			kc.Mods = append(kc.Mods, ks)
		} else {
			kc.Keys = append(kc.Keys, ks)
		}
	}
	return kc, nil
}

// ParseModifiers parses modifier names such as "ctrl" or "shift"; ErrUnknownKey for others.
func ParseModifiers(names []string) ([]xproto.Keysym, error) {
	var out []xproto.Keysym
	for _, n := range names {
		ks, err := ParseKey(n)
		if err != nil {
			return nil, err
		}
		if !modifierSyms[ks] {
			return nil, fmt.Errorf("%w: %q is not a modifier", ErrUnknownKey, n)
		}
		out = append(out, ks)
	}
	return out, nil
}

// canonicalNames names keysyms for messages; the first name wins.
var canonicalNames = map[xproto.Keysym]string{
	0xffe1: "shift", 0xffe2: "shift_r", 0xffe3: "ctrl", 0xffe4: "ctrl_r", 0xffe9: "alt",
	0xffea: "alt_r", 0xffe7: "meta", 0xffe8: "meta_r", 0xffeb: "super", 0xffec: "super_r",
	0xff0d: "Return", 0xff09: "Tab", 0xff1b: "Escape", 0xff08: "BackSpace", 0xffff: "Delete",
	0xff55: "Page_Up", 0xff56: "Page_Down", 0x20: "space",
}

// KeysymName returns a readable name for ks.
func KeysymName(ks xproto.Keysym) string {
	if n, ok := canonicalNames[ks]; ok {
		return n
	}
	switch {
	case ks >= 0x20 && ks <= 0x7e, ks >= 0xa0 && ks <= 0xff:
		return string(rune(ks))
	case ks&0xff000000 == 0x01000000:
		return string(rune(ks & 0xffffff))
	}
	best := ""
	for name, v := range keyNames {
		if v == ks && (best == "" || len(name) < len(best) || len(name) == len(best) && name < best) {
			best = name
		}
	}
	if best != "" {
		return best
	}
	return fmt.Sprintf("0x%x", uint32(ks))
}
