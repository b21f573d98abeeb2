package desktop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// clipboardError maps a clipboard error met before the clipboard changed: an owner that
// did not answer a conversion in time, or ownership the X server did not grant, is
// clipboard_unavailable (a refusal: nothing changed); other errors are returned as they
// are.
func clipboardError(err error) error {
	switch {
	case errors.Is(err, x11.ErrTimeout):
		return authz.Refuse(authz.CodeClipboardUnavailable, "%v; nothing was read or changed. Retry once; if it persists, type the text instead", err)
	case errors.Is(err, x11.ErrSelectionNotOwned):
		return authz.Refuse(authz.CodeClipboardUnavailable, "%v; the clipboard was not changed. Retry once; if it persists, type the text instead", err)
	}
	return err
}

// clipboardSettle is how long a write waits for another client to take the clipboard
// back (clipboard managers and jealous owners answer the SelectionClear within
// milliseconds; a loaded machine needs more) before it says the clipboard holds it.
const clipboardSettle = 250 * time.Millisecond

// clipboardLost reports a write whose ownership another client took back at once: the
// text was on offer for a moment (a clipboard manager may have copied it), so this is
// an error result with the code clipboard_unavailable, not a refusal.
func (d *desk) clipboardLost(ctx context.Context, bytes int) *tool.Result {
	owner := "another client"
	if pid, ok, err := d.b.SelectionOwner(ctx, "CLIPBOARD"); err == nil && ok && pid > 0 {
		owner = fmt.Sprintf("pid %d", pid)
	}
	msg := fmt.Sprintf("the clipboard was taken over by %s right after the write; it does not hold the %d bytes written. Retry once; if it persists, type the text instead", owner, bytes)
	return &tool.Result{IsError: true, Content: []tool.Content{tool.Text(string(authz.CodeClipboardUnavailable) + ": " + msg)},
		Structured: map[string]any{"error_code": string(authz.CodeClipboardUnavailable), "error": msg},
		Details:    map[string]any{"route": "x11_selection", "bytes": bytes, "owned": false}}
}
