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

// pressKeyPastes reports whether a press_key call pastes: the key ctrl+v, shift+Insert
// or XF86Paste, with the modifiers of both modifier arguments, as the handler presses it.
func pressKeyPastes(a *pressKeyArgs) bool {
	combo, err := keyCombo(a.Key, append(append([]string{}, a.Modifier...), a.Modifiers...))
	return err == nil && x11.IsPaste(combo)
}

// hotkeyPastes reports whether a hotkey call pastes.
func hotkeyPastes(a *hotkeyArgs) bool {
	combo, err := x11.ParseKeyList(a.Keys)
	return err == nil && x11.IsPaste(combo)
}

// pointPastes reports whether a pointer call presses the middle button, which pastes the
// primary selection.
func pointPastes(a *pointArgs) bool { return a.Button == "middle" }

// dragPastes reports whether a drag holds the middle button, which pastes the primary
// selection where it is released.
func dragPastes(a *dragArgs) bool { return a.Button == "middle" }
