package x11

import (
	"testing"

	"github.com/jezek/xgb/xproto"
)

// TestWindowManagerAnswerWidths: the width of the ConfigureNotify says which question was
// answered, across the wrap of the widths; an answer to an older question than one already
// counted, one of a window not asked about, and a width no outstanding question asked for
// (another client can configure the window, or send a forged ConfigureNotify) count nothing.
func TestWindowManagerAnswerWidths(t *testing.T) {
	b := &Backend{}
	b.wm.win = 7
	b.wm.changed = make(chan struct{})
	answer := func(win xproto.Window, width uint16) uint64 {
		b.handleWindowManagerAnswer(xproto.ConfigureNotifyEvent{Window: win, Width: width})
		return b.wm.answered
	}
	width := func(n uint64) uint16 { return uint16(1 + n%wmAskWidths) }
	b.wm.sent = 3
	if got := answer(7, width(2)); got != 2 {
		t.Errorf("answer to question 2 of 3: answered = %d, want 2", got)
	}
	if got := answer(7, width(1)); got != 2 {
		t.Errorf("a late answer to question 1: answered = %d, want 2", got)
	}
	if got := answer(8, width(3)); got != 2 {
		t.Errorf("another window's configuration: answered = %d, want 2", got)
	}
	if got := answer(7, width(999)); got != 2 {
		t.Errorf("a width no question asked for yet: answered = %d, want 2", got)
	}
	if got := answer(7, 0); got != 2 {
		t.Errorf("width 0: answered = %d, want 2", got)
	}
	if got := answer(7, width(3)); got != 3 {
		t.Errorf("answer to question 3: answered = %d, want 3", got)
	}
	// Across the wrap: question 1001 asks for width 2 again.
	b.wm.sent = 1001
	if got := answer(7, width(1001)); got != 1001 {
		t.Errorf("answer to question 1001: answered = %d, want 1001", got)
	}
	b.wm.sent = 1500
	if got := answer(7, width(1400)); got != 1400 {
		t.Errorf("answer to question 1400 of 1500: answered = %d, want 1400", got)
	}
	if !b.wm.heard {
		t.Error("answers counted, yet the manager is not marked as heard")
	}
}
