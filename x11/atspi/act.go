package atspi

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/godbus/dbus/v5"
)

// Routes name how an element action was delivered.
const (
	// RouteAction is Action.DoAction.
	RouteAction = "atspi_action"
	// RouteSelection is Selection.SelectChild on the element's parent.
	RouteSelection = "atspi_selection"
	// RouteEditableText is EditableText.SetTextContents or InsertText.
	RouteEditableText = "atspi_editable_text"
	// RouteValue is setting Value.CurrentValue.
	RouteValue = "atspi_value"
	// RouteScrollTo is Component.ScrollTo.
	RouteScrollTo = "atspi_scroll_to"
)

// Press is the kind of pointer press an element action stands for.
type Press int

// Press kinds.
const (
	// PressClick is a left click: select a selectable item, or click, press or toggle.
	PressClick Press = iota + 1
	// PressActivate is a double-click on an item (a row, a file, an icon): activate it.
	PressActivate
	// PressMenu is a right click: open the element's context menu.
	PressMenu
)

// String returns the press kind's name.
func (p Press) String() string {
	switch p {
	case PressClick:
		return "click"
	case PressActivate:
		return "activate"
	case PressMenu:
		return "menu"
	}
	return fmt.Sprintf("Press(%d)", int(p))
}

// actionsFor lists, best first, the action names that perform p on an element of role.
func actionsFor(p Press, role string) []string {
	switch p {
	case PressClick:
		if activateRoles[role] { // "activate" on a row is a double-click
			return []string{"click", "press", "toggle", "jump", "open"}
		}
		return []string{"click", "press", "toggle", "jump", "activate", "open"}
	case PressActivate:
		if activateRoles[role] {
			return []string{"activate", "open"}
		}
	case PressMenu:
		return []string{"menu", "showmenu", "show menu", "popup", "context menu", "contextmenu"}
	}
	return nil
}

// Outcome is what an element action did. Verified is true only with evidence: the
// toolkit's acknowledgement plus, where there is one, a read-back of the effect.
type Outcome struct {
	// Route names the delivery (RouteAction, …).
	Route string
	// Effect describes what was done, for people.
	Effect string
	// Verified is true when the effect was confirmed.
	Verified bool
	// Evidence holds what the confirmation rests on.
	Evidence map[string]any
}

// accessible returns an error unless el is an accessible object.
func accessible(el *Element) error {
	if !el.Accessible() {
		return fmt.Errorf("%w: element %d is the window's geometry, not an accessible object", ErrUnsupported, el.Index)
	}
	return nil
}

// Live checks that el still exists with its role and is not defunct, and returns its
// current states. A gone or changed element is ErrStale.
func (c *Client) Live(ctx context.Context, el *Element) (StateSet, error) {
	if err := accessible(el); err != nil {
		return 0, err
	}
	conn, err := c.bus(ctx)
	if err != nil {
		return 0, err
	}
	return c.live(ctx, conn, el)
}

func (c *Client) live(ctx context.Context, conn *dbus.Conn, el *Element) (StateSet, error) {
	var role string
	var words []uint32
	p := newPipeline(conn, c.callTimeout)
	var errs [2]error
	p.add(el.ref, ifaceAccessible+".GetRoleName", func(call *dbus.Call) {
		errs[0] = storeOrClassify(ctx, call, el.ref, c, &role)
	})
	p.add(el.ref, ifaceAccessible+".GetState", func(call *dbus.Call) {
		errs[1] = storeOrClassify(ctx, call, el.ref, c, &words)
	})
	if err := p.run(ctx); err != nil {
		if err == ErrNotResponding {
			return 0, fmt.Errorf("%w: %s did not answer within %s", ErrNotResponding, el.ref.bus, c.callTimeout)
		}
		return 0, err
	}
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	st := stateSet(words)
	switch {
	case role != el.Role:
		return 0, fmt.Errorf("%w: element %d was a %s and is now a %s", ErrStale, el.Index, el.Role, role)
	case st.Has(StateDefunct):
		return 0, fmt.Errorf("%w: element %d (%s %q) no longer exists", ErrStale, el.Index, el.Role, el.Name)
	}
	return st, nil
}

func storeOrClassify(ctx context.Context, call *dbus.Call, r ref, c *Client, out ...any) error {
	if call.Err != nil {
		return classify(ctx, call.Err, r, call.Method, c.callTimeout.String())
	}
	return call.Store(out...)
}

// afterState reads el's states after an action into ev ("states_after", or
// "element_gone" when it no longer exists, which an action such as closing a dialog
// causes).
func (c *Client) afterState(ctx context.Context, conn *dbus.Conn, el *Element, ev map[string]any) (StateSet, bool) {
	var words []uint32
	if err := c.call(ctx, conn, el.ref, ifaceAccessible+".GetState", nil, &words); err != nil {
		ev["element_gone"] = true
		ev["after_error"] = err.Error()
		return 0, false
	}
	st := stateSet(words)
	if st.Has(StateDefunct) {
		ev["element_gone"] = true
		return st, false
	}
	ev["states_after"] = st.Reported(true)
	return st, true
}

// Press performs p on el through the toolkit: Selection.SelectChild for a click on a
// selectable item, otherwise the matching action. It returns ErrUnsupported, having done
// nothing, when el offers no such route (the caller may fall back to pointer input).
func (c *Client) Press(ctx context.Context, el *Element, p Press) (Outcome, error) {
	if err := accessible(el); err != nil {
		return Outcome{}, err
	}
	conn, err := c.bus(ctx)
	if err != nil {
		return Outcome{}, err
	}
	before, err := c.live(ctx, conn, el)
	if err != nil {
		return Outcome{}, err
	}
	if p == PressClick && before.Has(StateSelectable) {
		if out, ok, err := c.selectChild(ctx, conn, el, before); ok || err != nil {
			return out, err
		}
	}
	idx, name, err := c.findAction(ctx, conn, el, p)
	if err != nil {
		return Outcome{}, err
	}
	ev := map[string]any{"action": name, "action_index": idx, "states_before": before.Reported(true)}
	var ok bool
	if err := c.call(ctx, conn, el.ref, ifaceAction+".DoAction", []any{int32(idx)}, &ok); err != nil {
		ev["error"] = err.Error()
		c.afterState(ctx, conn, el, ev)
		return Outcome{Route: RouteAction, Effect: fmt.Sprintf("action %q on %s: %v", name, describe(el), err), Evidence: ev}, nil
	}
	ev["returned"] = ok
	after, alive := c.afterState(ctx, conn, el, ev)
	if alive && after != before {
		ev["state_changed"] = true
	}
	effect := fmt.Sprintf("performed action %q on %s", name, describe(el))
	if !ok {
		effect = fmt.Sprintf("the toolkit refused action %q on %s", name, describe(el))
	}
	return Outcome{Route: RouteAction, Effect: effect, Verified: ok, Evidence: ev}, nil
}

// findAction returns the index and name of el's action for p.
func (c *Client) findAction(ctx context.Context, conn *dbus.Conn, el *Element, p Press) (int, string, error) {
	want := actionsFor(p, el.Role)
	if el.ifaces&hasAction == 0 || len(want) == 0 {
		return 0, "", fmt.Errorf("%w: %s has no %s action", ErrUnsupported, describe(el), p)
	}
	var acts []actionInfo
	if err := c.call(ctx, conn, el.ref, ifaceAction+".GetActions", nil, &acts); err != nil {
		return 0, "", err
	}
	names := make([]string, min(len(acts), 16))
	pl := newPipeline(conn, c.callTimeout)
	for i := range names {
		pl.add(el.ref, ifaceAction+".GetName", func(call *dbus.Call) {
			var s string
			if call.Err == nil && call.Store(&s) == nil {
				names[i] = strings.ToLower(s)
			}
		}, int32(i))
	}
	if err := pl.run(ctx); err != nil {
		return 0, "", fmt.Errorf("%w: %s", ErrNotResponding, el.ref.bus)
	}
	for _, w := range want {
		if i := slices.Index(names, w); i >= 0 {
			return i, w, nil
		}
	}
	return 0, "", fmt.Errorf("%w: %s has no %s action (it has %v)", ErrUnsupported, describe(el), p, names)
}

// selectChild selects el through its parent's Selection interface. ok is false, with no
// error, when the parent has none.
func (c *Client) selectChild(ctx context.Context, conn *dbus.Conn, el *Element, before StateSet) (Outcome, bool, error) {
	var parent struct {
		Bus  string
		Path dbus.ObjectPath
	}
	var v dbus.Variant
	if err := c.call(ctx, conn, el.ref, ifaceProperties+".Get", []any{ifaceAccessible, "Parent"}, &v); err != nil {
		return Outcome{}, false, nil
	}
	if dbus.Store([]any{v.Value()}, &parent) != nil || parent.Bus == "" {
		return Outcome{}, false, nil
	}
	pr := ref{bus: parent.Bus, path: parent.Path}
	if pr.bus != el.ref.bus { // only ever act on the window's own process
		return Outcome{}, false, nil
	}
	var ifaces []string
	if c.call(ctx, conn, pr, ifaceAccessible+".GetInterfaces", nil, &ifaces) != nil || parseIfaces(ifaces)&hasSelection == 0 {
		return Outcome{}, false, nil
	}
	var idx int32
	if err := c.call(ctx, conn, el.ref, ifaceAccessible+".GetIndexInParent", nil, &idx); err != nil || idx < 0 {
		return Outcome{}, false, nil
	}
	ev := map[string]any{"parent": pr.String(), "child_index": idx, "states_before": before.Reported(true)}
	var ok bool
	if err := c.call(ctx, conn, pr, ifaceSelection+".SelectChild", []any{idx}, &ok); err != nil {
		ev["error"] = err.Error()
		return Outcome{Route: RouteSelection, Effect: fmt.Sprintf("select %s: %v", describe(el), err), Evidence: ev}, true, nil
	}
	ev["returned"] = ok
	after, alive := c.afterState(ctx, conn, el, ev)
	selected := alive && after.Has(StateSelected)
	ev["selected"] = selected
	return Outcome{Route: RouteSelection, Effect: "selected " + describe(el), Verified: ok && selected, Evidence: ev}, true, nil
}

// SetText replaces el's text through EditableText.SetTextContents and reads it back.
func (c *Client) SetText(ctx context.Context, el *Element, text string) (Outcome, error) {
	conn, err := c.editable(ctx, el)
	if err != nil {
		return Outcome{}, err
	}
	ev := map[string]any{}
	var ok bool
	if err := c.call(ctx, conn, el.ref, ifaceEditableText+".SetTextContents", []any{text}, &ok); err != nil {
		ev["error"] = err.Error()
		return Outcome{Route: RouteEditableText, Effect: fmt.Sprintf("set text of %s: %v", describe(el), err), Evidence: ev}, nil
	}
	ev["returned"] = ok
	verified := c.readBack(ctx, conn, el, 0, text, int32(utf8.RuneCountInString(text)), ev)
	return Outcome{Route: RouteEditableText, Effect: fmt.Sprintf("set the text of %s", describe(el)), Verified: ok && verified, Evidence: ev}, nil
}

// InsertText appends text to el's text through EditableText.InsertText (an agent cannot
// place the caret, so typing into an element continues its text), moves the caret past
// it, and reads it back.
func (c *Client) InsertText(ctx context.Context, el *Element, text string) (Outcome, error) {
	return c.insertText(ctx, el, text, false)
}

// TypeAtCaret inserts text where el's caret is, as keys typed into it would land (at the
// end when the toolkit reports no caret), moves the caret past it, and reads it back.
func (c *Client) TypeAtCaret(ctx context.Context, el *Element, text string) (Outcome, error) {
	return c.insertText(ctx, el, text, true)
}

func (c *Client) insertText(ctx context.Context, el *Element, text string, atCaret bool) (Outcome, error) {
	conn, err := c.editable(ctx, el)
	if err != nil {
		return Outcome{}, err
	}
	var props map[string]dbus.Variant
	if err := c.call(ctx, conn, el.ref, ifaceProperties+".GetAll", []any{ifaceText}, &props); err != nil {
		return Outcome{}, err
	}
	count, _ := props["CharacterCount"].Value().(int32)
	pos := count
	if caret, ok := props["CaretOffset"].Value().(int32); atCaret && ok && caret >= 0 && caret <= count {
		pos = caret
	}
	n := int32(utf8.RuneCountInString(text))
	ev := map[string]any{"position": pos, "length_before": count}
	var ok bool
	// GTK takes the length in bytes, other toolkits in characters: bytes ≥ characters
	// covers both.
	if err := c.call(ctx, conn, el.ref, ifaceEditableText+".InsertText", []any{pos, text, int32(len(text))}, &ok); err != nil {
		ev["error"] = err.Error()
		return Outcome{Route: RouteEditableText, Effect: fmt.Sprintf("insert text into %s: %v", describe(el), err), Evidence: ev}, nil
	}
	ev["returned"] = ok
	var moved bool
	if c.call(ctx, conn, el.ref, ifaceText+".SetCaretOffset", []any{pos + n}, &moved) == nil {
		ev["caret_moved"] = moved
	}
	verified := c.readBack(ctx, conn, el, pos, text, count+n, ev)
	return Outcome{Route: RouteEditableText, Effect: fmt.Sprintf("inserted %d characters into %s at %d", n, describe(el), pos), Verified: ok && verified, Evidence: ev}, nil
}

// editable checks that el is live editable text and returns the connection.
func (c *Client) editable(ctx context.Context, el *Element) (*dbus.Conn, error) {
	if err := accessible(el); err != nil {
		return nil, err
	}
	if el.ifaces&hasEditableText == 0 {
		return nil, fmt.Errorf("%w: %s has no EditableText interface", ErrUnsupported, describe(el))
	}
	conn, err := c.bus(ctx)
	if err != nil {
		return nil, err
	}
	st, err := c.live(ctx, conn, el)
	if err != nil {
		return nil, err
	}
	if !st.Has(StateEditable) || st.Has(StateReadOnly) {
		return nil, fmt.Errorf("%w: %s is not editable now", ErrUnsupported, describe(el))
	}
	return conn, nil
}

// readBack reads el's text at pos and records whether it is want and the whole text
// has wantCount characters. Password fields are not read: only their length is compared.
func (c *Client) readBack(ctx context.Context, conn *dbus.Conn, el *Element, pos int32, want string, wantCount int32, ev map[string]any) bool {
	var props map[string]dbus.Variant
	if err := c.call(ctx, conn, el.ref, ifaceProperties+".GetAll", []any{ifaceText}, &props); err != nil {
		ev["read_back_error"] = err.Error()
		return false
	}
	count, _ := props["CharacterCount"].Value().(int32)
	ev["character_count"] = count
	if el.Role == passwordRole {
		ev["read_back"] = "(password field: only its length is read)"
		ev["matches"] = count == wantCount
		return count == wantCount
	}
	var got string
	n := int32(utf8.RuneCountInString(want))
	if err := c.call(ctx, conn, el.ref, ifaceText+".GetText", []any{pos, pos + n}, &got); err != nil {
		ev["read_back_error"] = err.Error()
		return false
	}
	ev["read_back"] = clip(got, maxNameBytes)
	match := got == want && count == wantCount
	ev["matches"] = match
	return match
}

// SetValue sets el's Value.CurrentValue and reads it back. A value outside the element's
// range is ErrOutOfRange, before anything is changed.
func (c *Client) SetValue(ctx context.Context, el *Element, v float64) (Outcome, error) {
	if err := accessible(el); err != nil {
		return Outcome{}, err
	}
	if el.ifaces&hasValue == 0 {
		return Outcome{}, fmt.Errorf("%w: %s has no Value interface", ErrUnsupported, describe(el))
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Outcome{}, fmt.Errorf("%w: %v is not a number", ErrOutOfRange, v)
	}
	conn, err := c.bus(ctx)
	if err != nil {
		return Outcome{}, err
	}
	if _, err := c.live(ctx, conn, el); err != nil {
		return Outcome{}, err
	}
	var props map[string]dbus.Variant
	if err := c.call(ctx, conn, el.ref, ifaceProperties+".GetAll", []any{ifaceValue}, &props); err != nil {
		return Outcome{}, err
	}
	lo, _ := props["MinimumValue"].Value().(float64)
	hi, _ := props["MaximumValue"].Value().(float64)
	step, _ := props["MinimumIncrement"].Value().(float64)
	before, _ := props["CurrentValue"].Value().(float64)
	if lo < hi && (v < lo || v > hi) {
		return Outcome{}, fmt.Errorf("%w: %v is outside %s's range %v–%v", ErrOutOfRange, v, describe(el), lo, hi)
	}
	ev := map[string]any{"requested": v, "before": before, "range": ValueRange{Min: lo, Max: hi, Step: step}}
	if err := c.call(ctx, conn, el.ref, ifaceProperties+".Set", []any{ifaceValue, "CurrentValue", dbus.MakeVariant(v)}); err != nil {
		ev["error"] = err.Error()
		return Outcome{Route: RouteValue, Effect: fmt.Sprintf("set value of %s: %v", describe(el), err), Evidence: ev}, nil
	}
	var got dbus.Variant
	if err := c.call(ctx, conn, el.ref, ifaceProperties+".Get", []any{ifaceValue, "CurrentValue"}, &got); err != nil {
		ev["read_back_error"] = err.Error()
		return Outcome{Route: RouteValue, Effect: "set the value of " + describe(el), Evidence: ev}, nil
	}
	back, _ := got.Value().(float64)
	ev["read_back"] = back
	tol := math.Max(step/2, 1e-9*math.Max(1, math.Abs(v)))
	ok := math.Abs(back-v) <= tol
	ev["matches"] = ok
	return Outcome{Route: RouteValue, Effect: fmt.Sprintf("set the value of %s to %v", describe(el), back), Verified: ok, Evidence: ev}, nil
}

// ScrollTo asks the toolkit to scroll el into view (Component.ScrollTo, anywhere). When
// the toolkit does not implement it (returns false and nothing moved) the result is
// ErrUnsupported: nothing happened.
func (c *Client) ScrollTo(ctx context.Context, el *Element) (Outcome, error) {
	if err := accessible(el); err != nil {
		return Outcome{}, err
	}
	if el.ifaces&hasComponent == 0 {
		return Outcome{}, fmt.Errorf("%w: %s is not a Component", ErrUnsupported, describe(el))
	}
	conn, err := c.bus(ctx)
	if err != nil {
		return Outcome{}, err
	}
	before, err := c.live(ctx, conn, el)
	if err != nil {
		return Outcome{}, err
	}
	var e0 extents
	_ = c.call(ctx, conn, el.ref, ifaceComponent+".GetExtents", []any{uint32(0)}, &e0)
	var ok bool
	const anywhere = 6 // ATSPI_SCROLL_ANYWHERE
	if err := c.call(ctx, conn, el.ref, ifaceComponent+".ScrollTo", []any{uint32(anywhere)}, &ok); err != nil {
		return Outcome{}, err
	}
	ev := map[string]any{"returned": ok, "states_before": before.Reported(true)}
	var e1 extents
	_ = c.call(ctx, conn, el.ref, ifaceComponent+".GetExtents", []any{uint32(0)}, &e1)
	after, alive := c.afterState(ctx, conn, el, ev)
	moved := e0 != e1
	if r, ok := e1.rect(); ok {
		ev["screen_frame_after"] = r
	}
	ev["moved"] = moved
	if !ok && !moved {
		return Outcome{}, fmt.Errorf("%w: the toolkit does not scroll %s into view (ScrollTo returned false)", ErrUnsupported, describe(el))
	}
	showing := alive && after.Has(StateShowing)
	ev["showing"] = showing
	return Outcome{Route: RouteScrollTo, Effect: "scrolled " + describe(el) + " into view", Verified: ok && showing, Evidence: ev}, nil
}

// Extents reads el's current screen rectangle; ok is false when it has none (off screen,
// not a Component).
func (c *Client) Extents(ctx context.Context, el *Element) (r Rect, ok bool, err error) {
	if !el.Accessible() || el.ifaces&hasComponent == 0 {
		return Rect{}, false, nil
	}
	conn, err := c.bus(ctx)
	if err != nil {
		return Rect{}, false, err
	}
	if _, err := c.live(ctx, conn, el); err != nil {
		return Rect{}, false, err
	}
	var e extents
	if err := c.call(ctx, conn, el.ref, ifaceComponent+".GetExtents", []any{uint32(0)}, &e); err != nil {
		return Rect{}, false, err
	}
	r, ok = e.rect()
	return r, ok, nil
}

// describe names an element for messages: `push button "OK" [3]`.
func describe(el *Element) string {
	if el.Name != "" {
		return fmt.Sprintf("%s %q [%d]", el.Role, clip(el.Name, 40), el.Index)
	}
	return fmt.Sprintf("%s [%d]", el.Role, el.Index)
}
