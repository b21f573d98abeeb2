package desktop

import (
	"context"
	"fmt"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/internal/procfs"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
	"github.com/cua-host/cua-host/x11/atspi"
)

// Reading typed text back. Keys that reached the X server say nothing of what the
// toolkit made of them: a keymap it read too late, a field that filters characters or
// lost the focus. Where the target window's focused element is editable text on the
// accessibility bus, type_text reads its text state before the keys and the text at the
// insertion point (the caret, or the start of the selection the keys replace) after them: effect confirmed when the text sent is there, suspected_noop when
// the field did not change, type_text_incomplete (with what arrived) when something else
// did. Elsewhere (terminals, windows without an accessible tree, password fields, which
// are never read) the effect stays unverifiable and the evidence says why.

// qt5 reports whether process pid runs Qt 5 (it has libQt5Gui loaded).
func qt5(pid int) bool { return pid > 0 && procfs.MapsLibrary(pid, "libQt5Gui.so") }

// typedFieldWalk bounds the walk that finds the focused field before the keys;
// typedFieldCatchUp the wait before it for the window's client to handle the focus.
const (
	typedFieldWalk    = time.Second
	typedFieldCatchUp = 300 * time.Millisecond
)

// After the keys, the field is read until it shows the text, or until it has not changed
// for typedQuiet (a busy browser takes seconds for 100 keys, and goes on showing more),
// at most typedSettle; typedPoll is the pause between two reads.
const (
	typedQuiet  = 700 * time.Millisecond
	typedSettle = 8 * time.Second
	typedPoll   = 20 * time.Millisecond
)

// typedField is the focused editable element keys go to, with its text state and the
// text at its caret before them.
type typedField struct {
	el *atspi.Element
	// how says how el was chosen when no element reported the focus; "" when one did.
	how    string
	before atspi.TextState
	// at is the text that followed the insertion point (the caret, or the start of the
	// selection the keys replace) before the keys, as long as the text sent.
	at string
}

// focusedTextField returns win's focused editable text element before the keys, or nil
// and why it cannot be read.
func (d *desk) focusedTextField(ctx context.Context, win *x11.Window, text string) (*typedField, string) {
	switch {
	case win == nil:
		return nil, "no window was named"
	case d.ax == nil:
		return nil, "no accessibility bus"
	case strings.ContainsAny(text, "\t\r\b\x1b"):
		return nil, "the text has control keys, whose effect is not text"
	case qt5(win.PID):
		// Measured: featherpad and kwrite crashed (SIGSEGV) as the keys came in after their
		// accessible tree had been read.
		return nil, "a Qt 5 program's accessibility bridge crashes when its text changes after it was read"
	}
	// The session's keyboard focus was just given to win; a toolkit marks its focused
	// element only once it has handled that (GTK 4 reports no focused element in a window
	// it does not believe active). Its answer to a ping says it has.
	d.b.CaughtUp(ctx, win.ID, typedFieldCatchUp)
	snap, err := d.ax.Snapshot(ctx, atspiWindow(win), walkBudget(ctx, atspi.WalkOptions{Timeout: typedFieldWalk}))
	if err != nil {
		return nil, "the accessible tree could not be read: " + err.Error()
	}
	if snap.Degraded {
		return nil, "the window has no accessible tree (" + snap.DegradedReason + ")"
	}
	el, how := focusedElement(snap), ""
	if el == nil {
		// A toolkit marks the focused element only in the window it believes active; GTK 4
		// stops believing it when the person's focus leaves the window, though the
		// session's keyboard still has it. Keys make text only in an editable field:
		// when the window has exactly one, it is where they go, if anywhere.
		if el = onlyEditableText(snap); el == nil {
			if snap.Truncated {
				return nil, fmt.Sprintf("the walk of the window's %d elements stopped (%s) before it found an element with the keyboard focus",
					snap.Visited, strings.Join(snap.Reasons, ", "))
			}
			return nil, "no element of the window reports the keyboard focus"
		}
		how = "the window's only editable text (no element reports the keyboard focus)"
	}
	switch {
	case el.Role == atspi.PasswordRole:
		return nil, "the focused element is a password field, whose text is never read"
	case !el.HasText() || !el.StateSet().Has(atspi.StateEditable):
		return nil, fmt.Sprintf("the focused element is a %s, not editable text", describeRole(el))
	case strings.Contains(text, "\n") && !el.StateSet().Has(atspi.StateMultiLine):
		return nil, "the text has a newline, which a single-line field does not take as text"
	}
	st, err := d.ax.ReadTextState(ctx, el)
	if err != nil {
		return nil, "the focused field's text could not be read: " + err.Error()
	}
	if st.Caret < 0 {
		return nil, "the focused field reports no caret"
	}
	n := int32(utf8.RuneCountInString(text))
	at, err := d.ax.ReadText(ctx, el, st.InsertAt(), st.InsertAt()+n)
	if err != nil {
		return nil, "the focused field's text could not be read: " + err.Error()
	}
	return &typedField{el: el, how: how, before: st, at: at}, ""
}

// onlyEditableText returns the snapshot's editable text element when it has exactly one.
func onlyEditableText(snap *atspi.Snapshot) *atspi.Element {
	var found *atspi.Element
	for i := range snap.Elements {
		el := &snap.Elements[i]
		if !el.Accessible() || !el.HasText() || !el.StateSet().Has(atspi.StateEditable) {
			continue
		}
		if found != nil {
			return nil
		}
		found = el
	}
	return found
}

// typedOutcome is what the read-back after the keys found.
type typedOutcome struct {
	effect tool.Effect
	// arrived is what the field holds where the text went, when it is not the text sent.
	arrived  string
	mismatch bool
}

// readBackTyped waits for text to show at f's insertion point — as long as the field keeps
// changing, up to typedSettle — and records what it read in ev["read_back"].
func (d *desk) readBackTyped(ctx context.Context, f *typedField, text string, ev map[string]any) typedOutcome {
	n := int32(utf8.RuneCountInString(text))
	from := f.before.InsertAt()
	grows := n - f.before.Selected() // how many characters the field gains
	rb := map[string]any{"element": describeRole(f.el), "before": f.before}
	if f.how != "" {
		rb["chosen"] = f.how
	}
	ev["read_back"] = rb
	deadline := time.Now().Add(typedSettle)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < typedSettle+time.Second {
		deadline = dl.Add(-time.Second)
	}
	var st atspi.TextState
	var got string
	var last atspi.TextState
	lastText, changed := "", time.Now()
	for {
		var err error
		if st, err = d.ax.ReadTextState(ctx, f.el); err == nil {
			got, err = d.ax.ReadText(ctx, f.el, from, from+n)
		}
		if err != nil {
			rb["error"] = err.Error()
			return typedOutcome{effect: tool.EffectUnverifiable}
		}
		if got == text && (st.Count-f.before.Count == grows || st.Caret == from+n) {
			rb["after"], rb["matches"] = st, true
			return typedOutcome{effect: tool.EffectConfirmed}
		}
		if st != last || got != lastText {
			last, lastText, changed = st, got, time.Now()
		}
		if time.Now().After(deadline) || time.Since(changed) > typedQuiet || ctx.Err() != nil {
			break
		}
		time.Sleep(typedPoll)
	}
	rb["after"], rb["matches"] = st, false
	if st == f.before && got == f.at {
		rb["found"] = "the field did not change"
		return typedOutcome{effect: tool.EffectSuspectedNoop}
	}
	// What arrived: as many characters at the insertion point as the field gained (and
	// the selection the keys replaced).
	arrived := got
	if grew := st.Count - f.before.Count + f.before.Selected(); grew >= 0 && grew != n {
		if a, err := d.ax.ReadText(ctx, f.el, from, from+grew); err == nil {
			arrived = a
		}
	}
	rb["found"] = clipText(arrived, 200)
	return typedOutcome{effect: tool.EffectUnverifiable, arrived: arrived, mismatch: true}
}

// typeMismatch reports keys that were all sent while the focused field shows something
// else where they went: an error result (outcome completed: the keys were sent) with the
// code type_text_incomplete and what arrived.
func typeMismatch(dl *delivery, text, arrived string, ev map[string]any) *tool.Result {
	sent := utf8.RuneCountInString(text)
	msg := fmt.Sprintf("sent all %d characters, but the focused field shows %q where they went, not %q (%d characters arrived). Look at the field before typing again: clear it and type it all, or type what is missing",
		sent, clipText(arrived, 80), clipText(text, 80), utf8.RuneCountInString(arrived))
	details := map[string]any{"route": dl.route, "delivery": dl.mode, "delivered_count": sent, "verified": false,
		"arrived_count": utf8.RuneCountInString(arrived), "evidence": ev}
	return &tool.Result{IsError: true, Content: []tool.Content{tool.Text(string(authz.CodeTypeTextIncomplete) + ": " + msg)},
		Structured: map[string]any{"error_code": string(authz.CodeTypeTextIncomplete), "error": msg}, Details: details}
}
