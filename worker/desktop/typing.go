package desktop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// MaxTypeDelayMS bounds type_text's delay_ms.
const MaxTypeDelayMS = 1000

// typeChunk is how many characters type_text sends between two checks that the keys
// still go to the target (its focus, no foreign grab) when no delay is asked for: a
// window that goes away mid-text stops the typing within one chunk.
const typeChunk = 64

// typeDeadlineMargin is the time a paced type_text keeps for itself before the call's
// deadline: the checks around the keys and the result.
const typeDeadlineMargin = 500 * time.Millisecond

// typeDelay checks delay_ms and that typing text at that pace fits before the call's
// deadline, before anything is typed.
func typeDelay(ctx context.Context, ms *int, text string) (time.Duration, error) {
	if ms == nil || *ms == 0 {
		return 0, nil
	}
	if *ms < 0 || *ms > MaxTypeDelayMS {
		return 0, invalid("delay_ms = %d: want 0 to %d", *ms, MaxTypeDelayMS)
	}
	delay := time.Duration(*ms) * time.Millisecond
	n := utf8.RuneCountInString(text)
	if n < 2 {
		return delay, nil
	}
	need := time.Duration(n-1) * delay
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl) - typeDeadlineMargin; need > left {
			return 0, invalid("%d characters %d ms apart take %v, more than the %v left before the call's deadline; type fewer characters per call or lower delay_ms",
				n, *ms, need.Round(time.Millisecond), max(left, 0).Round(time.Millisecond))
		}
	}
	return delay, nil
}

// typed is how far typeText got.
type typed struct {
	// offset is the byte offset in the text up to which every character was sent.
	offset int
	stats  x11.TypeStats
}

// typePaced types text into win (nil: wherever the focus is) through dl: one character at
// a time with delay between them, or, without a delay, in chunks of typeChunk characters.
// The key guards run before each character or chunk, so typing stops, rather than goes
// elsewhere, when the target loses the focus or goes away. It returns how far it got,
// with the error that stopped it.
func (d *desk) typePaced(ctx context.Context, dl *delivery, win *x11.Window, text string, delay time.Duration) (typed, error) {
	var got typed
	// Qt 5 reads the Shift state of the core keyboard, not of the session's: in the
	// background its characters are typed without Shift (measured: featherpad and kwrite
	// got "7" for "&" and lowercase for capitals).
	unshifted := dl.background() && win != nil && qt5(win.PID)
	per := typeChunk
	if delay > 0 {
		per = 1
	}
	for got.offset < len(text) {
		if got.offset > 0 && delay > 0 {
			select {
			case <-ctx.Done():
				return got, ctx.Err()
			case <-time.After(delay):
			}
		}
		end := advance(text[got.offset:], per, false) + got.offset
		chunk := text[got.offset:end]
		typeText := dl.dev.TypeText
		if unshifted {
			typeText = dl.dev.TypeTextUnshifted
		}
		st, err := typeText(ctx, chunk, d.keyGuards(dl, win)...)
		got.stats.Remapped += st.Remapped
		got.stats.Batches += st.Batches
		if err != nil {
			got.stats.Runes += st.Runes
			got.offset += advance(chunk, st.Runes, true)
			return got, err
		}
		got.stats.Runes += st.Runes
		got.offset = end
	}
	return got, nil
}

// advance returns the byte offset in s after n characters. With keys, n counts keys as
// TypeText does: a carriage return is no key of its own ("\r\n" types one Return).
func advance(s string, n int, keys bool) int {
	off := 0
	for n > 0 && off < len(s) {
		r, size := utf8.DecodeRuneInString(s[off:])
		off += size
		if !keys || r != '\r' {
			n--
		}
	}
	return off
}

// typeIncomplete reports typing that stopped after some characters were sent: an error
// result (outcome completed: those characters were typed) with the code
// type_text_incomplete, what arrived and what did not, and why it stopped.
func typeIncomplete(dl *delivery, text string, got typed, why error, extra map[string]any) *tool.Result {
	delivered := utf8.RuneCountInString(text[:got.offset])
	rest := text[got.offset:]
	reason := why.Error()
	var r *authz.Refusal
	if errors.As(why, &r) {
		// The check's own words are about the keys after it: "no key was sent".
		reason = string(r.Code) + ": " + strings.TrimSuffix(r.Message, "; no key was sent")
	}
	msg := fmt.Sprintf("typed %d of %d characters, then stopped; %d did not arrive, from %q on. Why: %s. Look at the field before typing again: type only the rest, or clear it and type it all",
		delivered, delivered+utf8.RuneCountInString(rest), utf8.RuneCountInString(rest), clipText(rest, 40), reason)
	details := map[string]any{"route": dl.route, "delivery": dl.mode, "delivered_count": delivered,
		"undelivered_count": utf8.RuneCountInString(rest), "stopped_by": reason, "stats": got.stats}
	for k, v := range extra {
		details[k] = v
	}
	return &tool.Result{IsError: true, Content: []tool.Content{tool.Text(string(authz.CodeTypeTextIncomplete) + ": " + msg)},
		Structured: map[string]any{"error_code": string(authz.CodeTypeTextIncomplete), "error": msg}, Details: details}
}

// clipText shortens s to n characters, marking the cut.
func clipText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return s[:advance(s, n, false)] + "…"
}
