package desktop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/internal/credential"
	"github.com/cua-host/cua-host/x11"
	"github.com/cua-host/cua-host/x11/atspi"
)

// Where type_secret may type. A secret typed into an element that shows its text (a
// terminal, an editor, a search field) could be read back from the screen or the
// accessible tree by the agent it is kept from. By default type_secret therefore types
// only while the keyboard focus of the target window is on an accessible element whose
// role is atspi.PasswordRole: toolkits show such a field's text as bullets and keep it out
// of AT-SPI's Text interface, and cua-host never reads it. The check runs three times:
// before anything is touched (the window has a password field at all), after the window
// was given the focus (the focused element is one), and under the input lock right
// before the first key (that element still has the focus). After the keys, the element's
// focus is read once more and reported. The operator may exempt a credential with
// credential.AnyFieldAttribute.
//
// A refusal here is permission_denied: the call is well formed and the window may be
// typed into, but the operator's rule for secrets forbids this destination.

// fieldSettle bounds how long, after the window got the focus, the toolkit may take to
// report the focused element (a window that was just activated reports it a moment later).
const fieldSettle = time.Second

// fieldPoll is the pause between two reads of the focused element while it settles.
const fieldPoll = 50 * time.Millisecond

// anyFieldHint tells the agent what would allow the call, and who decides it.
const anyFieldHint = "Only the operator can let a credential be typed elsewhere (" + credential.AnyFieldAttribute + " in the credentials directory's " + credential.AttributesFile + ")"

// secretDenied is the refusal of a destination that is not a password field.
func secretDenied(format string, args ...any) error {
	return authz.Refuse(authz.CodePermissionDenied, "type_secret types only into a focused password field; %s; nothing was typed. %s",
		fmt.Sprintf(format, args...), anyFieldHint)
}

// fieldSnapshot walks win's accessible tree for the password-field checks. A window
// without an accessible tree is refused: what its focus is on cannot be told.
func (d *desk) fieldSnapshot(ctx context.Context, win *x11.Window) (*atspi.Snapshot, error) {
	if win == nil {
		return nil, secretDenied("no window was named and none has the focus")
	}
	if d.ax == nil {
		return nil, secretDenied("this session has no accessibility bus, so the focused element of window 0x%x cannot be told to be one", win.ID)
	}
	snap, err := d.ax.Snapshot(ctx, atspiWindow(win), walkBudget(ctx, atspi.WalkOptions{MaxElements: atspi.MaxElements}))
	if err != nil {
		return nil, refusal(err)
	}
	if snap.Degraded {
		return nil, secretDenied("window 0x%x (pid %d) has no accessible tree (%s), so its focused element cannot be told to be one", win.ID, win.PID, snap.DegradedReason)
	}
	return snap, nil
}

// hasPasswordField refuses, before anything is touched, a window that shows no password
// field at all.
func (d *desk) hasPasswordField(ctx context.Context, win *x11.Window) error {
	snap, err := d.fieldSnapshot(ctx, win)
	if err != nil {
		return err
	}
	for i := range snap.Elements {
		if el := &snap.Elements[i]; el.Accessible() && el.Role == atspi.PasswordRole {
			return nil
		}
	}
	return secretDenied("window 0x%x (pid %d) shows no password field", win.ID, win.PID)
}

// focusedPasswordField returns the element that has the focus in win, once win has the
// keyboard focus, and refuses unless it is a password field. It waits up to fieldSettle
// for the toolkit to report a focused password field.
func (d *desk) focusedPasswordField(ctx context.Context, win *x11.Window) (*atspi.Element, error) {
	deadline := time.Now().Add(fieldSettle)
	for {
		snap, err := d.fieldSnapshot(ctx, win)
		if err != nil {
			return nil, err
		}
		el := focusedElement(snap)
		if el != nil && el.Role == atspi.PasswordRole {
			return el, nil
		}
		if time.Now().After(deadline) {
			if el == nil {
				return nil, secretDenied("no element of window 0x%x (pid %d) reports the keyboard focus", win.ID, win.PID)
			}
			return nil, secretDenied("the focused element of window 0x%x (pid %d) is a %s", win.ID, win.PID, describeRole(el))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(fieldPoll):
		}
	}
}

// focusedElement returns the innermost accessible element of snap in the focused state,
// nil when there is none.
func focusedElement(snap *atspi.Snapshot) *atspi.Element {
	var found *atspi.Element
	for i := range snap.Elements {
		el := &snap.Elements[i]
		if el.Accessible() && el.StateSet().Has(atspi.StateFocused) && (found == nil || el.Depth >= found.Depth) {
			found = el
		}
	}
	return found
}

// describeRole names an element for a refusal: its role, and its accessible name when it
// has one (never its value).
func describeRole(el *atspi.Element) string {
	if el.Name == "" {
		return fmt.Sprintf("%q", el.Role)
	}
	return fmt.Sprintf("%q (%q)", el.Role, clipTitle(el.Name))
}

// stillFocused is the guard that field still exists as a password field and has the
// focus, run under the input lock right before the first key. A toolkit reports the focus
// off and on again while its window is being activated, so the guard gives the field up
// to guardSettle to report it before it refuses.
func (d *desk) stillFocused(field *atspi.Element, win *x11.Window) x11.Guard {
	return func(ctx context.Context) error {
		deadline := time.Now().Add(guardSettle)
		for {
			st, err := d.ax.Live(ctx, field)
			switch {
			case errors.Is(err, atspi.ErrStale):
				return secretDenied("the password field of window 0x%x went away before the first key", win.ID)
			case err != nil:
				return refusal(err)
			case st.Has(atspi.StateFocused):
				return nil
			case time.Now().After(deadline):
				return secretDenied("the focus left the password field of window 0x%x before the first key", win.ID)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(fieldPoll):
			}
		}
	}
}

// guardSettle is how long the last check before the keys waits for a password field
// that the toolkit briefly reports unfocused (while its window is activated).
const guardSettle = 500 * time.Millisecond

// fieldAfter reports, once the keys were sent, whether field still had the focus: a
// focus that moved while the keys went out may have taken some of them elsewhere.
func (d *desk) fieldAfter(ctx context.Context, field *atspi.Element) map[string]any {
	out := map[string]any{"role": field.Role, "checked": "before the first key"}
	st, err := d.ax.Live(context.WithoutCancel(ctx), field)
	switch {
	case err != nil:
		out["focus_after"] = "unknown: " + err.Error()
	case st.Has(atspi.StateFocused):
		out["focus_after"] = "still on the password field"
	default:
		out["focus_after"] = "moved off the password field while or after the keys were sent; some may have reached another element"
	}
	return out
}
