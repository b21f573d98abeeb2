package atspi

import (
	"context"
	"fmt"

	"github.com/godbus/dbus/v5"
)

// TextState is what an element's Text interface says of its text: its length in
// characters, where its caret is (-1 when the toolkit reports none), and its first
// selection (SelStart == SelEnd when nothing is selected).
type TextState struct {
	Count    int32 `json:"character_count"`
	Caret    int32 `json:"caret_offset"`
	SelStart int32 `json:"selection_start"`
	SelEnd   int32 `json:"selection_end"`
}

// InsertAt is where typed text lands: the start of the selection, which it replaces, or
// the caret.
func (s TextState) InsertAt() int32 {
	if s.SelEnd > s.SelStart {
		return s.SelStart
	}
	return s.Caret
}

// Selected is how many characters typed text replaces.
func (s TextState) Selected() int32 { return max(s.SelEnd-s.SelStart, 0) }

// HasText reports whether el has the Text interface (its text can be read).
func (e *Element) HasText() bool { return e.ifaces&hasText != 0 }

// ReadTextState reads el's Text interface: its length and caret. A password field is
// ErrUnsupported: nothing of it is read.
func (c *Client) ReadTextState(ctx context.Context, el *Element) (TextState, error) {
	conn, err := c.textConn(ctx, el)
	if err != nil {
		return TextState{}, err
	}
	var props map[string]dbus.Variant
	if err := c.call(ctx, conn, el.ref, ifaceProperties+".GetAll", []any{ifaceText}, &props); err != nil {
		return TextState{}, err
	}
	st := TextState{Caret: -1}
	st.Count, _ = props["CharacterCount"].Value().(int32)
	if caret, ok := props["CaretOffset"].Value().(int32); ok {
		st.Caret = caret
	}
	var n int32
	if c.call(ctx, conn, el.ref, ifaceText+".GetNSelections", nil, &n) == nil && n > 0 {
		var from, to int32
		if c.call(ctx, conn, el.ref, ifaceText+".GetSelection", []any{int32(0)}, &from, &to) == nil && to > from {
			st.SelStart, st.SelEnd = from, to
		}
	}
	return st, nil
}

// ReadText returns el's text from character from up to (not including) to. A password
// field is ErrUnsupported: nothing of it is read.
func (c *Client) ReadText(ctx context.Context, el *Element, from, to int32) (string, error) {
	conn, err := c.textConn(ctx, el)
	if err != nil {
		return "", err
	}
	var got string
	if err := c.call(ctx, conn, el.ref, ifaceText+".GetText", []any{from, to}, &got); err != nil {
		return "", err
	}
	return got, nil
}

// textConn checks that el's text may be read and returns the bus connection.
func (c *Client) textConn(ctx context.Context, el *Element) (*dbus.Conn, error) {
	if err := accessible(el); err != nil {
		return nil, err
	}
	if el.ifaces&hasText == 0 {
		return nil, fmt.Errorf("%w: %s has no Text interface", ErrUnsupported, describe(el))
	}
	if el.Role == passwordRole {
		return nil, fmt.Errorf("%w: %s is a password field, whose text is never read", ErrUnsupported, describe(el))
	}
	return c.bus(ctx)
}
