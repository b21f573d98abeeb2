package desktop_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// slowWindowEnv names the file into which this test binary, started with it set, runs as
// slowWindow instead of running tests.
const slowWindowEnv = "CUA_DESKTOP_TEST_SLOW_WINDOW"

func init() {
	if path := os.Getenv(slowWindowEnv); path != "" {
		if err := slowWindow(path); err != nil {
			fmt.Fprintln(os.Stderr, "slow window:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// Phases of slowWindow, as a program setting itself up goes through them.
const (
	slowBlank   = 400 * time.Millisecond // mapped, nothing drawn
	slowDrawing = 400 * time.Millisecond // a new bar every 30 ms
)

// slowWindow maps a window of one colour, draws nothing into it for slowBlank, then a new
// bar every 30 ms for slowDrawing, and waits to be killed. It appends to path a line for
// its first and its last bar ("first-bar" and "last-bar", after the server drew them) and
// one for every key press it receives ("key"), each with the Unix time in nanoseconds.
func slowWindow(path string) error {
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	note := func(what string) { fmt.Fprintf(out, "%s %d\n", what, time.Now().UnixNano()) }
	c, err := xgb.NewConn()
	if err != nil {
		return err
	}
	scr := xproto.Setup(c).DefaultScreen(c)
	wid, err := xproto.NewWindowId(c)
	if err != nil {
		return err
	}
	if err := xproto.CreateWindowChecked(c, scr.RootDepth, wid, scr.Root, 0, 0, 300, 200, 0,
		xproto.WindowClassInputOutput, scr.RootVisual, xproto.CwBackPixel|xproto.CwEventMask,
		[]uint32{0x2255aa, xproto.EventMaskKeyPress}).Check(); err != nil {
		return err
	}
	atom := func(name string) xproto.Atom {
		r, err := xproto.InternAtom(c, false, uint16(len(name)), name).Reply()
		if err != nil {
			return 0
		}
		return r.Atom
	}
	title := []byte("slow window")
	xproto.ChangeProperty(c, xproto.PropModeReplace, wid, xproto.AtomWmName, xproto.AtomString, 8, uint32(len(title)), title)
	xproto.ChangeProperty(c, xproto.PropModeReplace, wid, xproto.AtomWmClass, xproto.AtomString, 8, 10, []byte("slow\x00Slow\x00"))
	pid := binary.LittleEndian.AppendUint32(nil, uint32(os.Getpid()))
	xproto.ChangeProperty(c, xproto.PropModeReplace, wid, atom("_NET_WM_PID"), xproto.AtomCardinal, 32, 1, pid)
	xproto.MapWindow(c, wid)
	gc, err := xproto.NewGcontextId(c)
	if err != nil {
		return err
	}
	xproto.CreateGC(c, gc, xproto.Drawable(wid), xproto.GcForeground, []uint32{0xffcc00})
	go func() {
		for {
			ev, xe := c.WaitForEvent()
			if ev == nil && xe == nil {
				return
			}
			if _, ok := ev.(xproto.KeyPressEvent); ok {
				note("key")
			}
		}
	}()
	time.Sleep(slowBlank)
	// The last bar is the one drawn before the drawing time ran out, however late the
	// iterations ran on a loaded machine: its time is written once the loop ends.
	var lastBar time.Time
	for i, end := 0, time.Now().Add(slowDrawing); time.Now().Before(end); i++ {
		xproto.PolyFillRectangle(c, xproto.Drawable(wid), gc, []xproto.Rectangle{{X: 10, Y: int16(10 + 4*i), Width: 200, Height: 3}})
		if _, err := xproto.GetInputFocus(c).Reply(); err != nil {
			return err
		}
		lastBar = time.Now()
		if i == 0 {
			note("first-bar")
		}
		time.Sleep(30 * time.Millisecond)
	}
	fmt.Fprintf(out, "last-bar %d\n", lastBar.UnixNano())
	select {}
}

// TestLaunchedWindowSettles: launch_app returns once the new window has been drawn, not
// when it maps, and the first keys into it wait until it has stopped changing. The
// program maps a blank window, draws nothing for 400 ms, then a new bar every 30 ms for
// 400 ms: launch_app returns after its first bar, with window_drawn; type_text sent right
// after reaches it only after its last bar. The witness is the program's own record of
// its bars and of the key presses it received.
func TestLaunchedWindowSettles(t *testing.T) {
	reg, _ := setup(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	record := t.TempDir() + "/record"
	t.Setenv(slowWindowEnv, record)
	start := time.Now()
	r, err := call(t, reg, "launch_app", map[string]any{"launch_path": self})
	returned := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	st := structured(t, r)
	pid := int(st["pid"].(float64))
	wid := st["window_ids"].([]any)[0]
	t.Cleanup(func() { call(t, reg, "kill_app", map[string]any{"pid": pid, "grace_ms": 0}) })
	notes := func() map[string][]time.Time {
		b, _ := os.ReadFile(record)
		m := map[string][]time.Time{}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			what, at, _ := strings.Cut(l, " ")
			if ns, err := strconv.ParseInt(at, 10, 64); err == nil {
				m[what] = append(m[what], time.Unix(0, ns))
			}
		}
		return m
	}
	first := notes()["first-bar"]
	if len(first) == 0 || returned.Before(first[0]) {
		t.Fatalf("launch_app returned after %v, before the program drew its first bar (%v)", returned.Sub(start), first)
	}
	if st["window_drawn"] != true {
		t.Errorf("launch_app = %v; want window_drawn true", st)
	}
	if ms, _ := st["drawn_after_ms"].(float64); ms < float64((slowBlank - 100*time.Millisecond).Milliseconds()) {
		t.Errorf("drawn_after_ms = %v, want about %v", st["drawn_after_ms"], slowBlank.Milliseconds())
	}

	r, err = call(t, reg, "type_text", map[string]any{"pid": pid, "window_id": wid, "text": "ab"})
	if err != nil {
		t.Fatal(err)
	}
	var n map[string][]time.Time
	deadline := time.Now().Add(5 * time.Second)
	for n = notes(); (len(n["key"]) < 2 || len(n["last-bar"]) == 0) && time.Now().Before(deadline); n = notes() {
		time.Sleep(20 * time.Millisecond)
	}
	if len(n["key"]) < 2 || len(n["last-bar"]) == 0 {
		t.Fatalf("the program recorded %v after type_text = %v", n, details(t, r))
	}
	if k, last := n["key"][0], n["last-bar"][0]; k.Before(last) {
		t.Errorf("the first key reached the program %v before its last bar; type_text = %v", last.Sub(k), details(t, r))
	}
}
