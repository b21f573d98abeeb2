package desktop

import (
	"context"
	"sync"
	"time"

	"github.com/cua-host/cua-host/x11"
)

// Pointer input right after keys. An application answers keys by changing its window
// (text laid out again, the view scrolled to keep the caret in sight, often animated),
// and it does so after the keys arrived. A click sent meanwhile lands on what is under the
// pointer at that moment, not on what the agent saw: gnome-text-editor under metacity
// scrolled for about 150 ms after 30 typed lines, and a click sent at once put the caret
// after the last line instead of on the line aimed at (scripts/compat.sh). Pointer input
// into a window that keys went to less than typedRecently ago therefore first waits until
// the window has shown the same pixels for typedStillQuiet (x11.AwaitStill), at most
// typedStillWait. Other pointer input does not wait.
const (
	typedRecently   = time.Second
	typedStillQuiet = 80 * time.Millisecond
	typedStillWait  = 600 * time.Millisecond
)

// typedWindows remembers when keys last went to each window. It is safe for concurrent
// use.
type typedWindows struct {
	mu sync.Mutex // guards at
	at map[uint32]time.Time
}

// note records that keys went to window win now, and forgets windows typed into long ago.
func (t *typedWindows) note(win uint32) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.at == nil {
		t.at = map[uint32]time.Time{}
	}
	for w, at := range t.at {
		if now.Sub(at) >= typedRecently {
			delete(t.at, w)
		}
	}
	t.at[win] = now
}

// recent reports whether keys went to window win less than typedRecently ago.
func (t *typedWindows) recent(win uint32) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.at[win]
	return ok && time.Since(at) < typedRecently
}

// awaitTyped waits, before pointer input into win, until win is still when keys went to
// it less than typedRecently ago, and records the wait in ev (typed_settle_ms). A window
// that cannot be read is not waited for: the guards that run next refuse what must be
// refused.
func (d *desk) awaitTyped(ctx context.Context, win *x11.Window, ev map[string]any) error {
	if win == nil || !d.typed.recent(win.ID) {
		return nil
	}
	still, waited, err := d.b.AwaitStill(ctx, win.ID, typedStillQuiet, typedStillWait)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	ev["typed_settle_ms"] = waited.Milliseconds()
	if err == nil && !still {
		ev["typed_settle"] = "the window was still changing when the wait ended"
	}
	return nil
}
