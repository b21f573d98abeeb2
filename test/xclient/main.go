// Command xclient is a test X client that does what xevlog does not, the way a foreign or
// busy client would: it maps an override-redirect window (a menu, a tooltip, another
// client's popup), grabs the keyboard (a password prompt), maps a window that refuses
// the input focus, or owns the clipboard without ever answering for it (a hung
// application), taking it back whenever another client takes it. Like xevlog it writes every input event it receives as a JSON line, so
// tests use it as an oracle.
//
//	xclient [-override-redirect] [-grab-keyboard] [-no-focus] [-own-clipboard] [-keep-clipboard] [-x X -y Y] -width W -height H [-background 0xRRGGBB] [-out FILE]
//
// The first line is {"type":"ready","window":ID,"pid":PID} once the window is mapped; with
// -grab-keyboard a {"type":"grabbed"} line follows once the grab is held; with
// -own-clipboard, {"type":"clipboard_owned"} once it owns CLIPBOARD, then
// {"type":"selection_request"} for each request it leaves unanswered; with
// -keep-clipboard, {"type":"clipboard_retaken"} each time it takes CLIPBOARD back. A line "ungrab"
// on stdin releases the grab ({"type":"ungrabbed"}). It runs until it is killed.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "xclient:", err)
		os.Exit(1)
	}
}

// line is one logged event; the field names are xevlog's.
type line struct {
	Type   string `json:"type"`
	Window uint32 `json:"window,omitempty"`
	Button int    `json:"button,omitempty"`
	X      int    `json:"x"`
	Y      int    `json:"y"`
	RootX  int    `json:"root_x"`
	RootY  int    `json:"root_y"`
	Detail int    `json:"detail,omitempty"`
	Mode   int    `json:"mode,omitempty"`
	PID    int    `json:"pid,omitempty"`
}

// logger writes lines from the event loop and the stdin reader.
type logger struct {
	mu  sync.Mutex // mu guards enc
	enc *json.Encoder
}

func (l *logger) write(v line) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.enc.Encode(v)
}

func run() error {
	override := flag.Bool("override-redirect", false, "map an override-redirect window (the window manager does not manage it)")
	grab := flag.Bool("grab-keyboard", false, "grab the keyboard once the window is mapped")
	noFocus := flag.Bool("no-focus", false, "set WM_HINTS input=False: the window refuses the input focus")
	ownClipboard := flag.Bool("own-clipboard", false, "own CLIPBOARD once mapped and never answer a request for it")
	keepClipboard := flag.Bool("keep-clipboard", false, "with -own-clipboard: take CLIPBOARD back as soon as another client takes it")
	x := flag.Int("x", 0, "x position")
	y := flag.Int("y", 0, "y position")
	width := flag.Int("width", 200, "window width")
	height := flag.Int("height", 100, "window height")
	title := flag.String("title", "xclient", "window title")
	out := flag.String("out", "", "write events to this file instead of stdout")
	background := flag.Uint("background", 0x808080, "background colour as 0xRRGGBB (a 24-bit TrueColor visual's pixel value)")
	flag.Parse()
	var w io.Writer = os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	lg := &logger{enc: json.NewEncoder(w)}
	xgb.Logger = log.New(io.Discard, "", 0)
	c, err := xgb.NewConn()
	if err != nil {
		return err
	}
	defer c.Close()
	scr := xproto.Setup(c).DefaultScreen(c)
	wid, err := xproto.NewWindowId(c)
	if err != nil {
		return err
	}
	mask := uint32(xproto.EventMaskKeyPress | xproto.EventMaskKeyRelease | xproto.EventMaskButtonPress |
		xproto.EventMaskButtonRelease | xproto.EventMaskPointerMotion | xproto.EventMaskFocusChange |
		xproto.EventMaskStructureNotify)
	or := uint32(0)
	if *override {
		or = 1
	}
	// Value order follows the CW bit order: BackPixel, OverrideRedirect, EventMask.
	if err := xproto.CreateWindowChecked(c, scr.RootDepth, wid, scr.Root, int16(*x), int16(*y), uint16(*width), uint16(*height), 0,
		xproto.WindowClassInputOutput, scr.RootVisual, xproto.CwBackPixel|xproto.CwOverrideRedirect|xproto.CwEventMask,
		[]uint32{uint32(*background), or, mask}).Check(); err != nil {
		return err
	}
	xproto.ChangeProperty(c, xproto.PropModeReplace, wid, xproto.AtomWmName, xproto.AtomString, 8, uint32(len(*title)), []byte(*title))
	class := "xclient\x00XClient\x00"
	xproto.ChangeProperty(c, xproto.PropModeReplace, wid, xproto.AtomWmClass, xproto.AtomString, 8, uint32(len(class)), []byte(class))
	if *noFocus {
		// WM_HINTS: flags = InputHint, input = False; no WM_TAKE_FOCUS in WM_PROTOCOLS.
		hints := make([]byte, 9*4)
		binary.LittleEndian.PutUint32(hints[0:], 1)
		xproto.ChangeProperty(c, xproto.PropModeReplace, wid, xproto.AtomWmHints, xproto.AtomWmHints, 32, 9, hints)
	}
	// Keep the requested position and size (USPosition|USSize|PPosition|PSize).
	hints := make([]byte, 18*4)
	binary.LittleEndian.PutUint32(hints[0:], 1|2|4|8)
	binary.LittleEndian.PutUint32(hints[1*4:], uint32(*x))
	binary.LittleEndian.PutUint32(hints[2*4:], uint32(*y))
	binary.LittleEndian.PutUint32(hints[3*4:], uint32(*width))
	binary.LittleEndian.PutUint32(hints[4*4:], uint32(*height))
	xproto.ChangeProperty(c, xproto.PropModeReplace, wid, xproto.AtomWmNormalHints, xproto.AtomWmSizeHints, 32, 18, hints)
	xproto.MapWindow(c, wid)

	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "ungrab" {
				xproto.UngrabKeyboard(c, xproto.TimeCurrentTime)
				_, _ = xproto.GetInputFocus(c).Reply() // the ungrab has been processed
				lg.write(line{Type: "ungrabbed"})
			}
		}
	}()

	ready := false
	for {
		ev, xe := c.WaitForEvent()
		if ev == nil && xe == nil {
			return nil
		}
		if xe != nil {
			continue
		}
		switch e := ev.(type) {
		case xproto.MapNotifyEvent:
			if ready || e.Window != wid {
				continue
			}
			ready = true
			lg.write(line{Type: "ready", Window: uint32(wid), PID: os.Getpid()})
			if *grab {
				go grabKeyboard(c, wid, lg)
			}
			if *ownClipboard {
				go func() {
					if err := ownSelection(c, wid, "CLIPBOARD"); err != nil {
						lg.write(line{Type: "clipboard_failed"})
						return
					}
					lg.write(line{Type: "clipboard_owned"})
				}()
			}
		case xproto.SelectionRequestEvent:
			lg.write(line{Type: "selection_request"}) // and no SelectionNotify: the requestor waits
		case xproto.SelectionClearEvent:
			if *ownClipboard && *keepClipboard {
				go func() {
					if ownSelection(c, wid, "CLIPBOARD") == nil {
						lg.write(line{Type: "clipboard_retaken"})
					}
				}()
			}
		case xproto.ButtonPressEvent:
			lg.write(line{Type: "button_press", Button: int(e.Detail), X: int(e.EventX), Y: int(e.EventY), RootX: int(e.RootX), RootY: int(e.RootY)})
		case xproto.ButtonReleaseEvent:
			lg.write(line{Type: "button_release", Button: int(e.Detail), X: int(e.EventX), Y: int(e.EventY), RootX: int(e.RootX), RootY: int(e.RootY)})
		case xproto.MotionNotifyEvent:
			lg.write(line{Type: "motion", X: int(e.EventX), Y: int(e.EventY), RootX: int(e.RootX), RootY: int(e.RootY)})
		case xproto.KeyPressEvent:
			lg.write(line{Type: "key_press", Detail: int(e.Detail)})
		case xproto.KeyReleaseEvent:
			lg.write(line{Type: "key_release", Detail: int(e.Detail)})
		case xproto.FocusInEvent:
			lg.write(line{Type: "focus_in", Detail: int(e.Detail), Mode: int(e.Mode)})
		case xproto.FocusOutEvent:
			lg.write(line{Type: "focus_out", Detail: int(e.Detail), Mode: int(e.Mode)})
		}
	}
}

// ownSelection makes wid the owner of the selection name and checks that it is.
func ownSelection(c *xgb.Conn, wid xproto.Window, name string) error {
	a, err := xproto.InternAtom(c, false, uint16(len(name)), name).Reply()
	if err != nil {
		return err
	}
	if err := xproto.SetSelectionOwnerChecked(c, wid, a.Atom, xproto.TimeCurrentTime).Check(); err != nil {
		return err
	}
	r, err := xproto.GetSelectionOwner(c, a.Atom).Reply()
	if err != nil {
		return err
	}
	if r.Owner != wid {
		return fmt.Errorf("%s is owned by 0x%x", name, r.Owner)
	}
	return nil
}

// grabKeyboard grabs the keyboard for wid, retrying while another client (the window
// manager mapping the window) holds it, and logs "grabbed".
func grabKeyboard(c *xgb.Conn, wid xproto.Window, lg *logger) {
	for range 500 {
		r, err := xproto.GrabKeyboard(c, false, wid, xproto.TimeCurrentTime, xproto.GrabModeAsync, xproto.GrabModeAsync).Reply()
		if err == nil && r.Status == xproto.GrabStatusSuccess {
			lg.write(line{Type: "grabbed"})
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	lg.write(line{Type: "grab_failed"})
}
