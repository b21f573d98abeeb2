package desktop

import (
	"context"
	"os"
	"strings"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
	"github.com/cua-host/cua-host/x11/atspi"
)

// pasteElement reports whether activating el pastes: a menu item or button named
// "Paste…" (GTK's "_Paste" included), or an element offering a "paste" action. Localized
// names are not recognised (docs/security.md).
func pasteElement(el *atspi.Element) bool {
	name := strings.ToLower(strings.TrimLeft(strings.TrimSpace(el.Name), "_&"))
	if name == "paste" || strings.HasPrefix(name, "paste ") || strings.HasPrefix(name, "paste…") || strings.HasPrefix(name, "paste.") {
		return true
	}
	for _, a := range el.Actions {
		if a == "paste" {
			return true
		}
	}
	return false
}

// checkPasteElement refuses to activate an element that pastes unless the call may read
// the clipboard (call.ClipboardReadable) or every selection it may paste is unowned or
// the session's own: the element route's counterpart of the paste keys and the middle
// button, which the authorizer decides as clipboard reads.
func (d *desk) checkPasteElement(ctx context.Context, call *tool.Call, el *atspi.Element) error {
	if !pasteElement(el) || call.ClipboardReadable {
		return nil
	}
	for _, sel := range x11.PasteSelections {
		pid, owned, err := d.b.SelectionOwner(ctx, sel)
		switch {
		case err != nil:
			return refusal(err)
		case !owned || pid == os.Getpid():
		case pid > 0 && call.Session != nil && call.Session.LaunchRoot(pid) != 0:
		default:
			return authz.Refuse(authz.CodeAuthorizationRequired,
				"element %q pastes the %s selection, which another program owns: pasting reads the clipboard, which this session may not do without a grant (clipboard_read asks for one in standard mode)", el.Name, sel)
		}
	}
	return nil
}

// pressKeyPastes reports whether a press_key call with decoded arguments args pastes: the
// key ctrl+v, shift+Insert or XF86Paste, its modifiers included.
func pressKeyPastes(args map[string]any) bool {
	key, _ := args["key"].(string)
	combo, err := x11.ParseKeyCombo(key)
	if err != nil {
		return false
	}
	mods, err := x11.ParseModifiers(stringList(args["modifier"]))
	if err != nil {
		return false
	}
	combo.Mods = append(mods, combo.Mods...)
	return x11.IsPaste(combo)
}

// hotkeyPastes reports whether a hotkey call with decoded arguments args pastes.
func hotkeyPastes(args map[string]any) bool {
	combo, err := x11.ParseKeyList(stringList(args["keys"]))
	return err == nil && x11.IsPaste(combo)
}

// middleButton reports whether a pointer call with decoded arguments args presses the
// middle button, which pastes the primary selection.
func middleButton(args map[string]any) bool {
	b, _ := args["button"].(string)
	return b == "middle"
}

// stringList returns the strings of a JSON array; anything else is nil.
func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
