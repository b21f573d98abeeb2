package x11

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/url"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// MaxClipboardBytes bounds clipboard_write: larger data would need the INCR protocol for
// writing, which this backend does not implement.
const MaxClipboardBytes = 256000

// clipboard owns CLIPBOARD on its own connection and answers other clients' requests
// from its event loop goroutine, which stops on close.
type clipboard struct {
	conn  *xgb.Conn
	win   xproto.Window
	atoms atomCache

	// mu guards the fields below.
	mu    sync.Mutex
	owned bool
	// offer is what the clipboard holds, by target name (UTF8_STRING, image/png, …).
	offer map[string]offered
	// cleared is closed when another client takes CLIPBOARD from the current offer.
	cleared chan struct{}

	readMu   sync.Mutex // one read at a time
	notifyCh chan xproto.SelectionNotifyEvent
	propCh   chan xproto.PropertyNotifyEvent

	wg sync.WaitGroup
}

// clipboardConn starts the clipboard connection on first use.
func (b *Backend) clipboardConn(ctx context.Context) (*clipboard, error) {
	if b.closed() {
		return nil, ErrClosed
	}
	b.clipOnce.Do(func() {
		conn, err := dial(ctx, b.display)
		if err != nil {
			b.clipErr = err
			return
		}
		c := &clipboard{conn: conn, notifyCh: make(chan xproto.SelectionNotifyEvent, 1), propCh: make(chan xproto.PropertyNotifyEvent, 64)}
		c.atoms.init(conn)
		scr := xproto.Setup(conn).DefaultScreen(conn)
		wid, err := newPropertyWindow(conn, scr.Root)
		if err != nil {
			conn.Close()
			b.clipErr = err
			return
		}
		c.win = wid
		c.wg.Add(1)
		go c.loop(b)
		b.clip = c
	})
	if b.clipErr != nil {
		return nil, b.clipErr
	}
	if b.closed() {
		return nil, ErrClosed
	}
	return b.clip, nil
}

func (c *clipboard) close() {
	c.conn.Close()
	c.wg.Wait()
}

func (c *clipboard) loop(b *Backend) {
	defer c.wg.Done()
	for {
		ev, xe := c.conn.WaitForEvent()
		if ev == nil && xe == nil {
			return
		}
		if xe != nil {
			b.log.Debug("x11 clipboard async error", "err", xe.Error())
			continue
		}
		switch e := ev.(type) {
		case xproto.SelectionRequestEvent:
			c.answer(e)
		case xproto.SelectionClearEvent:
			c.mu.Lock()
			c.owned, c.offer = false, nil
			if c.cleared != nil {
				close(c.cleared)
				c.cleared = nil
			}
			c.mu.Unlock()
		case xproto.SelectionNotifyEvent:
			select {
			case c.notifyCh <- e:
			default:
			}
		case xproto.PropertyNotifyEvent:
			select {
			case c.propCh <- e:
			default:
			}
		}
	}
}

// offered is one target the clipboard serves: its property type and bytes.
type offered struct {
	typ  string
	data []byte
}

// textOffer is the targets text is served as.
func textOffer(text string) map[string]offered {
	utf8Text := offered{"UTF8_STRING", []byte(text)}
	return map[string]offered{"UTF8_STRING": utf8Text, "TEXT": utf8Text, "text/plain;charset=utf-8": utf8Text,
		"STRING": {"STRING", toLatin1([]byte(text))}}
}

// answer serves one SelectionRequest from the offer (ICCCM §2.2).
func (c *clipboard) answer(e xproto.SelectionRequestEvent) {
	c.mu.Lock()
	owned, offer := c.owned, c.offer
	c.mu.Unlock()
	prop := e.Property
	if prop == xproto.AtomNone {
		prop = e.Target // obsolete requestor
	}
	targets := c.atoms.get("TARGETS")
	ok := owned && e.Selection == c.atoms.get("CLIPBOARD")
	if ok {
		if e.Target == targets {
			list := []xproto.Atom{targets}
			for name := range offer {
				list = append(list, c.atoms.get(name))
			}
			buf := make([]byte, 4*len(list))
			for i, a := range list {
				binary.LittleEndian.PutUint32(buf[i*4:], uint32(a))
			}
			xproto.ChangeProperty(c.conn, xproto.PropModeReplace, e.Requestor, prop, xproto.AtomAtom, 32, uint32(len(list)), buf)
		} else {
			ok = false
			for name, o := range offer {
				if c.atoms.get(name) == e.Target {
					xproto.ChangeProperty(c.conn, xproto.PropModeReplace, e.Requestor, prop, c.atoms.get(o.typ), 8, uint32(len(o.data)), o.data)
					ok = true
					break
				}
			}
		}
	}
	if !ok {
		prop = xproto.AtomNone
	}
	ev := xproto.SelectionNotifyEvent{Time: e.Time, Requestor: e.Requestor, Selection: e.Selection, Target: e.Target, Property: prop}
	xproto.SendEvent(c.conn, false, e.Requestor, 0, string(ev.Bytes()))
}

func toLatin1(p []byte) []byte {
	out := make([]byte, 0, len(p))
	for _, r := range string(p) {
		if r > 0xff {
			r = '?'
		}
		out = append(out, byte(r))
	}
	return out
}

// ClipboardWrite takes ownership of CLIPBOARD with text and serves it to other clients
// until another client takes the selection or the backend closes.
func (b *Backend) ClipboardWrite(ctx context.Context, text string) error {
	if !utf8.ValidString(text) {
		return fmt.Errorf("%w: text is not valid UTF-8", ErrInvalidArgument)
	}
	return b.clipboardOffer(ctx, textOffer(text), len(text))
}

// ClipboardWriteImage puts an encoded image (mimeType "image/png" or "image/jpeg") on
// CLIPBOARD, served as that target.
func (b *Backend) ClipboardWriteImage(ctx context.Context, data []byte, mimeType string) error {
	return b.clipboardOffer(ctx, map[string]offered{mimeType: {mimeType, data}}, len(data))
}

// ClipboardWriteFile puts a file reference on CLIPBOARD, as file managers do: a
// text/uri-list, GNOME's copied-files list, and the path as text.
func (b *Backend) ClipboardWriteFile(ctx context.Context, path string) error {
	if !utf8.ValidString(path) {
		return fmt.Errorf("%w: path is not valid UTF-8", ErrInvalidArgument)
	}
	uri := (&url.URL{Scheme: "file", Path: path}).String()
	offer := textOffer(path)
	offer["text/uri-list"] = offered{"text/uri-list", []byte(uri + "\r\n")}
	offer["x-special/gnome-copied-files"] = offered{"x-special/gnome-copied-files", []byte("copy\n" + uri)}
	return b.clipboardOffer(ctx, offer, len(uri))
}

// clipboardOffer takes CLIPBOARD ownership with offer; size is the largest item's size.
func (b *Backend) clipboardOffer(ctx context.Context, offer map[string]offered, size int) error {
	if size > MaxClipboardBytes {
		return fmt.Errorf("%w: %d bytes (at most %d)", ErrInvalidArgument, size, MaxClipboardBytes)
	}
	c, err := b.clipboardConn(ctx)
	if err != nil {
		return err
	}
	sel := c.atoms.get("CLIPBOARD")
	c.mu.Lock()
	c.owned, c.offer = true, offer
	if c.cleared == nil {
		c.cleared = make(chan struct{})
	}
	c.mu.Unlock()
	if err := xproto.SetSelectionOwnerChecked(c.conn, c.win, sel, xproto.TimeCurrentTime).Check(); err != nil {
		return xerr("SetSelectionOwner", err)
	}
	r, err := xproto.GetSelectionOwner(c.conn, sel).Reply()
	if err != nil {
		return xerr("GetSelectionOwner", err)
	}
	if r.Owner != c.win {
		c.mu.Lock()
		c.owned, c.offer = false, nil
		c.mu.Unlock()
		return fmt.Errorf("%w: CLIPBOARD ownership was not granted (owner 0x%x)", ErrSelectionNotOwned, r.Owner)
	}
	return nil
}

// ClipboardOwned reports whether this backend owns CLIPBOARD now, as the X server says:
// false before any write and once another client has taken the clipboard.
func (b *Backend) ClipboardOwned(ctx context.Context) (bool, error) {
	c, err := b.clipboardConn(ctx)
	if err != nil {
		return false, err
	}
	r, err := xproto.GetSelectionOwner(c.conn, c.atoms.get("CLIPBOARD")).Reply()
	if err != nil {
		return false, xerr("GetSelectionOwner", err)
	}
	return r.Owner == c.win, nil
}

// ClipboardKept waits up to settle for another client to take CLIPBOARD from this
// backend's last write (a clipboard manager or a jealous owner answers within
// milliseconds) and reports whether the backend still owns it, as the X server says.
func (b *Backend) ClipboardKept(ctx context.Context, settle time.Duration) (bool, error) {
	c, err := b.clipboardConn(ctx)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	cleared := c.cleared
	c.mu.Unlock()
	if cleared != nil {
		t := time.NewTimer(settle)
		select {
		case <-cleared:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	return b.ClipboardOwned(ctx)
}

// ClipboardRead converts CLIPBOARD to UTF-8 text (falling back to STRING), waiting up to
// two seconds (or ctx) for the owner. owner is false when nobody owns the clipboard.
func (b *Backend) ClipboardRead(ctx context.Context) (text string, owner bool, err error) {
	c, err := b.clipboardConn(ctx)
	if err != nil {
		return "", false, err
	}
	c.readMu.Lock()
	defer c.readMu.Unlock()
	sel := c.atoms.get("CLIPBOARD")
	r, err := xproto.GetSelectionOwner(c.conn, sel).Reply()
	if err != nil {
		return "", false, xerr("GetSelectionOwner", err)
	}
	if r.Owner == xproto.WindowNone {
		return "", false, nil
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for _, target := range []xproto.Atom{c.atoms.get("UTF8_STRING"), xproto.AtomString} {
		data, ok, err := c.convert(rctx, sel, target)
		if err != nil {
			return "", true, err
		}
		if !ok {
			continue
		}
		if target == xproto.AtomString {
			return latin1(data), true, nil
		}
		return string(bytes.ToValidUTF8(data, []byte("\uFFFD"))), true, nil
	}
	return "", true, nil
}

// MaxClipboardTargets bounds how many targets ClipboardTargets names.
const MaxClipboardTargets = 64

// ClipboardTargets returns the targets (formats) the CLIPBOARD owner offers, by name
// ("UTF8_STRING", "image/png", …), without the protocol's own (TARGETS, TIMESTAMP,
// MULTIPLE, SAVE_TARGETS, DELETE). owner is false when nobody owns the clipboard.
func (b *Backend) ClipboardTargets(ctx context.Context) (targets []string, owner bool, err error) {
	c, err := b.clipboardConn(ctx)
	if err != nil {
		return nil, false, err
	}
	c.readMu.Lock()
	defer c.readMu.Unlock()
	sel := c.atoms.get("CLIPBOARD")
	r, err := xproto.GetSelectionOwner(c.conn, sel).Reply()
	if err != nil {
		return nil, false, xerr("GetSelectionOwner", err)
	}
	if r.Owner == xproto.WindowNone {
		return nil, false, nil
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	data, ok, err := c.convert(rctx, sel, c.atoms.get("TARGETS"))
	if err != nil || !ok {
		return nil, true, err
	}
	skip := map[string]bool{"TARGETS": true, "TIMESTAMP": true, "MULTIPLE": true, "SAVE_TARGETS": true, "DELETE": true}
	for i := 0; i+4 <= len(data) && len(targets) < MaxClipboardTargets; i += 4 {
		a := xproto.Atom(binary.LittleEndian.Uint32(data[i:]))
		if a == xproto.AtomNone {
			continue
		}
		n, err := xproto.GetAtomName(c.conn, a).Reply()
		if err != nil || skip[n.Name] {
			continue
		}
		targets = append(targets, n.Name)
	}
	return targets, true, nil
}

// convert asks the owner for target into our property and reads it, following INCR.
func (c *clipboard) convert(ctx context.Context, sel, target xproto.Atom) ([]byte, bool, error) {
	prop := c.atoms.get("CUA_HOST_SELECTION")
	drain(c.notifyCh)
	xproto.DeleteProperty(c.conn, c.win, prop)
	xproto.ConvertSelection(c.conn, c.win, sel, target, prop, xproto.TimeCurrentTime)
	var ev xproto.SelectionNotifyEvent
	select {
	case ev = <-c.notifyCh:
	case <-ctx.Done():
		return nil, false, fmt.Errorf("%w: the clipboard owner did not answer: %v", ErrTimeout, ctx.Err())
	}
	if ev.Property == xproto.AtomNone {
		return nil, false, nil
	}
	drainProps(c.propCh)
	pr, err := xproto.GetProperty(c.conn, true, c.win, prop, xproto.GetPropertyTypeAny, 0, 1<<24).Reply()
	if err != nil {
		return nil, false, xerr("GetProperty", err)
	}
	if pr.Type != c.atoms.get("INCR") {
		return pr.Value, true, nil
	}
	// INCR: the owner sends chunks, each announced by a new value of the property; a
	// zero-length chunk ends the transfer.
	var out []byte
	for {
		select {
		case pe := <-c.propCh:
			if pe.Atom != prop || pe.State != xproto.PropertyNewValue {
				continue
			}
		case <-ctx.Done():
			return nil, false, fmt.Errorf("%w: incremental clipboard transfer stalled", ErrTimeout)
		}
		chunk, err := xproto.GetProperty(c.conn, true, c.win, prop, xproto.GetPropertyTypeAny, 0, 1<<24).Reply()
		if err != nil {
			return nil, false, xerr("GetProperty", err)
		}
		if len(chunk.Value) == 0 {
			return out, true, nil
		}
		out = append(out, chunk.Value...)
		if len(out) > 64<<20 {
			return nil, false, fmt.Errorf("%w: clipboard larger than 64 MiB", ErrInvalidArgument)
		}
	}
}

func drain(ch chan xproto.SelectionNotifyEvent) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func drainProps(ch chan xproto.PropertyNotifyEvent) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
