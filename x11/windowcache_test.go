package x11_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"go.uber.org/goleak"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11"
)

// seenWindow is what the oracle (xprop and xwininfo) says about one window.
type seenWindow struct {
	Frame     x11.Rect
	Mapped    bool
	Minimized bool
	Focused   bool
	Title     string
}

var (
	absX   = regexp.MustCompile(`Absolute upper-left X:\s+(-?\d+)`)
	absY   = regexp.MustCompile(`Absolute upper-left Y:\s+(-?\d+)`)
	width  = regexp.MustCompile(`\n\s+Width:\s+(\d+)`)
	height = regexp.MustCompile(`\n\s+Height:\s+(\d+)`)
	title  = regexp.MustCompile(`_NET_WM_NAME\([A-Z0-9_]+\) = "(.*)"`)
	hexIDs = regexp.MustCompile(`0x[0-9a-f]+`)
)

// oracle describes windows ids as xprop and xwininfo read them from the server, and gives
// the order of those listed in _NET_CLIENT_LIST_STACKING, top-most first.
func oracle(t *testing.T, ids []uint32) (map[uint32]seenWindow, []uint32) {
	t.Helper()
	root := harness.Command(t, "xprop", "-root", "_NET_CLIENT_LIST_STACKING", "_NET_ACTIVE_WINDOW")
	lines := strings.SplitN(root, "\n", 2)
	var order []uint32
	for _, h := range hexIDs.FindAllString(lines[0], -1) {
		v, _ := strconv.ParseUint(h, 0, 32)
		if slices.Contains(ids, uint32(v)) {
			order = append([]uint32{uint32(v)}, order...)
		}
	}
	var active uint64
	if len(lines) > 1 {
		if h := hexIDs.FindString(lines[1]); h != "" {
			active, _ = strconv.ParseUint(h, 0, 32)
		}
	}
	num := func(re *regexp.Regexp, s string) int {
		m := re.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("%v not in %q", re, s)
		}
		v, _ := strconv.Atoi(m[1])
		return v
	}
	out := map[uint32]seenWindow{}
	for _, id := range order {
		info := harness.Command(t, "xwininfo", "-id", fmt.Sprint(id))
		props := harness.Command(t, "xprop", "-id", fmt.Sprint(id), "_NET_WM_NAME", "_NET_WM_STATE", "WM_STATE")
		w := seenWindow{
			Frame:     x11.Rect{X: num(absX, info), Y: num(absY, info), Width: num(width, info), Height: num(height, info)},
			Mapped:    strings.Contains(info, "Map State: IsViewable"),
			Minimized: strings.Contains(props, "_NET_WM_STATE_HIDDEN") || strings.Contains(props, "window state: Iconic"),
			Focused:   uint64(id) == active,
		}
		if m := title.FindStringSubmatch(props); m != nil {
			w.Title = m[1]
		}
		out[id] = w
	}
	return out, order
}

// listedAs describes windows ids as Windows returns them, and their order.
func listedAs(t *testing.T, b *x11.Backend, ids []uint32) (map[uint32]seenWindow, []uint32) {
	t.Helper()
	wins, err := b.Windows(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint32]seenWindow{}
	var order []uint32
	for _, w := range wins {
		if !slices.Contains(ids, w.ID) {
			continue
		}
		order = append(order, w.ID)
		out[w.ID] = seen(w)
	}
	return out, order
}

func seen(w x11.Window) seenWindow {
	return seenWindow{Frame: w.Frame, Mapped: w.Mapped, Minimized: w.Minimized, Focused: w.Focused, Title: w.Title}
}

// describedAs describes windows ids as Window returns them one by one, and their order.
func describedAs(t *testing.T, b *x11.Backend, ids []uint32) (map[uint32]seenWindow, []uint32) {
	t.Helper()
	out := map[uint32]seenWindow{}
	stack := map[uint32]int{}
	var order []uint32
	for _, id := range ids {
		w, err := b.Window(t.Context(), id)
		if err != nil {
			continue
		}
		out[id], stack[id] = seen(w), w.Stack
		order = append(order, id)
	}
	slices.SortFunc(order, func(p, q uint32) int { return stack[p] - stack[q] })
	return out, order
}

// agree waits until the server has settled after a change (two oracle reads agree) and
// Windows, and Window for each window, say what the oracle says, and fails the test when
// that does not happen within 3 s.
func agree(t *testing.T, b *x11.Backend, step string, ids []uint32) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		before, beforeOrder := oracle(t, ids)
		got, gotOrder := listedAs(t, b, ids)
		one, oneOrder := describedAs(t, b, ids)
		after, afterOrder := oracle(t, ids)
		want := fmt.Sprint(after, afterOrder)
		settled := fmt.Sprint(before, beforeOrder) == want
		if settled && fmt.Sprint(got, gotOrder) == want && fmt.Sprint(one, oneOrder) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: Windows() says %v in order %x, Window() %v in order %x; xprop and xwininfo say %v in order %x",
				step, got, gotOrder, one, oneOrder, after, afterOrder)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWindowListFollowsTheServer changes windows with other clients (xdotool, wmctrl,
// processes starting and ending) and checks after each change that Windows and Window say
// what xprop and xwininfo read from the server, although Windows reuses descriptions no
// event has marked stale.
func TestWindowListFollowsTheServer(t *testing.T) {
	// The backend's goroutines (its event loop, xgb's) end with Close, which runs at
	// cleanup before this check.
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	b := open(t)
	a := harness.StartXevlog(t, harness.XevlogOptions{Title: "cache alpha"})
	z := harness.StartXevlog(t, harness.XevlogOptions{Title: "cache zulu"})
	windowOf(t, b, a)
	windowOf(t, b, z)
	ids := []uint32{a.Window, z.Window}
	agree(t, b, "start", ids)

	// Nothing changed: a read describes no window again.
	reads := x11.WindowDescriptionReads(b)
	if _, err := b.Windows(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Window(t.Context(), a.Window); err != nil {
		t.Fatal(err)
	}
	if n := x11.WindowDescriptionReads(b) - reads; n != 0 {
		t.Errorf("reads with nothing changed described %d windows again, want 0", n)
	}

	aid, zid := fmt.Sprint(a.Window), fmt.Sprint(z.Window)
	steps := []struct {
		name string
		run  func()
	}{
		{"move", func() { harness.Command(t, "xdotool", "windowmove", aid, "123", "145") }},
		{"resize", func() { harness.Command(t, "xdotool", "windowsize", aid, "311", "207") }},
		{"rename", func() { harness.Command(t, "xdotool", "set_window", "--name", "cache renamed", aid) }},
		{"activate the other", func() { harness.Command(t, "wmctrl", "-i", "-a", zid) }},
		{"raise", func() { harness.Command(t, "xdotool", "windowraise", aid) }},
		{"maximize", func() { harness.Command(t, "wmctrl", "-i", "-r", aid, "-b", "add,maximized_vert,maximized_horz") }},
		{"unmaximize", func() { harness.Command(t, "wmctrl", "-i", "-r", aid, "-b", "remove,maximized_vert,maximized_horz") }},
		{"minimize", func() { harness.Command(t, "xdotool", "windowminimize", zid) }},
		{"restore", func() { harness.Command(t, "wmctrl", "-i", "-a", zid) }},
		{"undecorate", func() {
			harness.Command(t, "xprop", "-id", aid, "-f", "_MOTIF_WM_HINTS", "32c", "-set", "_MOTIF_WM_HINTS", "2, 0, 0, 0, 0")
		}},
		{"unmap", func() { harness.Command(t, "xdotool", "windowunmap", zid) }},
		{"map", func() { harness.Command(t, "xdotool", "windowmap", zid) }},
	}
	for _, s := range steps {
		s.run()
		agree(t, b, s.name, ids)
	}

	// A new window is listed and described; an ended one is gone.
	n := harness.StartXevlog(t, harness.XevlogOptions{Title: "cache new"})
	ids = append(ids, n.Window)
	agree(t, b, "a new window", ids)
	if err := syscall.Kill(z.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	agree(t, b, "a window's process ended", ids)
	if _, err := b.Window(t.Context(), z.Window); !errorsIs(err, x11.ErrWindowNotFound) {
		t.Errorf("Window of an ended process's window = %v, want ErrWindowNotFound", err)
	}
}

// TestWindowListFollowsAnAncestorMoving moves a window between a listed window and its
// top-level frame — as a window manager with a wrapper window between the two may — and
// checks that the listed window's position follows (xwininfo is the oracle). Nothing but
// the moved window itself announces that move. The window manager is stopped and the test
// plays its part: it creates the frame, the wrapper and the window, and lists the window in
// _NET_CLIENT_LIST_STACKING.
func TestWindowListFollowsAnAncestorMoving(t *testing.T) {
	b := open(t)
	conn, root, atom := standIn(t)
	stacking := atom("_NET_CLIENT_LIST_STACKING")
	was, err := xproto.GetProperty(conn, false, root, stacking, xproto.AtomWindow, 0, 1<<16).Reply()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		xproto.ChangePropertyChecked(conn, xproto.PropModeReplace, root, stacking, xproto.AtomWindow, 32, was.ValueLen, was.Value).Check()
	})
	create := func(parent xproto.Window, x, y int16, mask uint32, values []uint32) xproto.Window {
		id, err := xproto.NewWindowId(conn)
		if err != nil {
			t.Fatal(err)
		}
		if err := xproto.CreateWindowChecked(conn, 0, id, parent, x, y, 200, 150, 0, xproto.WindowClassInputOutput, 0, mask, values).Check(); err != nil {
			t.Fatal(err)
		}
		if err := xproto.MapWindowChecked(conn, id).Check(); err != nil {
			t.Fatal(err)
		}
		return id
	}
	frame := create(root, 300, 200, xproto.CwOverrideRedirect, []uint32{1})
	wrapper := create(frame, 5, 20, 0, nil)
	client := create(wrapper, 0, 0, 0, nil)
	name := "cache wrapped"
	xproto.ChangePropertyChecked(conn, xproto.PropModeReplace, client, atom("_NET_WM_NAME"), atom("UTF8_STRING"), 8, uint32(len(name)), []byte(name)).Check()
	list := append(slices.Clone(was.Value), byte(client), byte(client>>8), byte(client>>16), byte(client>>24))
	if err := xproto.ChangePropertyChecked(conn, xproto.PropModeReplace, root, stacking, xproto.AtomWindow, 32, uint32(len(list)/4), list).Check(); err != nil {
		t.Fatal(err)
	}
	ids := []uint32{uint32(client)}
	agree(t, b, "start", ids)
	agree(t, b, "nothing", ids) // now from the cache
	if err := xproto.ConfigureWindowChecked(conn, wrapper, xproto.ConfigWindowX|xproto.ConfigWindowY, []uint32{41, 33}).Check(); err != nil {
		t.Fatal(err)
	}
	agree(t, b, "the wrapper moved", ids)
	// A read right after the server has processed a move says where the window is now,
	// not where the event loop last heard it was: every read waits for the loop to handle
	// the events sent before it.
	for i := range 200 {
		x := 10 + i%2*50
		if err := xproto.ConfigureWindowChecked(conn, wrapper, xproto.ConfigWindowX, []uint32{uint32(x)}).Check(); err != nil {
			t.Fatal(err)
		}
		w, err := b.Window(t.Context(), uint32(client))
		if err != nil {
			t.Fatal(err)
		}
		if want := 300 + x; w.Frame.X != want {
			t.Fatalf("move %d: Window() says x=%d right after the move to x=%d", i, w.Frame.X, want)
		}
	}
	if err := xproto.UnmapWindowChecked(conn, wrapper).Check(); err != nil {
		t.Fatal(err)
	}
	agree(t, b, "the wrapper unmapped", ids)
}

// TestWindowListUnderConcurrentReadsAndChanges reads the window list from several
// goroutines while another client moves and renames a window, and checks that every read
// ends and the list then agrees with xprop and xwininfo.
func TestWindowListUnderConcurrentReadsAndChanges(t *testing.T) {
	b := open(t)
	a := harness.StartXevlog(t, harness.XevlogOptions{Title: "cache busy"})
	windowOf(t, b, a)
	id := fmt.Sprint(a.Window)
	done := make(chan error, 4)
	for range 4 {
		go func() {
			for range 100 {
				if _, err := b.Windows(t.Context()); err != nil {
					done <- err
					return
				}
				if _, err := b.Window(t.Context(), a.Window); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for i := range 20 {
		harness.Command(t, "xdotool", "windowmove", id, fmt.Sprint(50+i*7), "60", "set_window", "--name", fmt.Sprintf("cache busy %d", i), id)
	}
	for range 4 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a read of the window list did not end")
		}
	}
	agree(t, b, "concurrent reads and changes", []uint32{a.Window})
}

// TestActiveWindowFallsBackToTheFocus checks the active window a listing reports where the
// manager's _NET_ACTIVE_WINDOW is missing: the window with the input focus, read in the
// same listing, whether the property was missing at the previous read or not, and the
// property again once it is back. xdotool reads the focus for comparison.
func TestActiveWindowFallsBackToTheFocus(t *testing.T) {
	b := open(t)
	conn, root, atom := standIn(t)
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	stacking, active := atom("_NET_CLIENT_LIST_STACKING"), atom("_NET_ACTIVE_WINDOW")
	for _, a := range []xproto.Atom{stacking, active} {
		was, err := xproto.GetProperty(conn, false, root, a, xproto.GetPropertyTypeAny, 0, 1<<16).Reply()
		check("GetProperty", err)
		t.Cleanup(func() {
			if was.Format == 0 {
				xproto.DeletePropertyChecked(conn, root, a).Check()
				return
			}
			xproto.ChangePropertyChecked(conn, xproto.PropModeReplace, root, a, was.Type, was.Format, was.ValueLen, was.Value).Check()
		})
	}
	var ids []xproto.Window
	var list []byte
	for i, name := range []string{"fallback one", "fallback two"} {
		id, err := xproto.NewWindowId(conn)
		check("NewWindowId", err)
		check("CreateWindow", xproto.CreateWindowChecked(conn, 0, id, root, int16(50+300*i), 50, 200, 150, 0, xproto.WindowClassInputOutput, 0,
			xproto.CwOverrideRedirect, []uint32{1}).Check()) // the stopped manager would hold a map request
		check("name", xproto.ChangePropertyChecked(conn, xproto.PropModeReplace, id, atom("_NET_WM_NAME"), atom("UTF8_STRING"), 8, uint32(len(name)), []byte(name)).Check())
		check("MapWindow", xproto.MapWindowChecked(conn, id).Check())
		ids = append(ids, id)
		list = append(list, byte(id), byte(id>>8), byte(id>>16), byte(id>>24))
	}
	check("client list", xproto.ChangePropertyChecked(conn, xproto.PropModeReplace, root, stacking, xproto.AtomWindow, 32, uint32(len(list)/4), list).Check())
	setActive := func(w xproto.Window) {
		v := []byte{byte(w), byte(w >> 8), byte(w >> 16), byte(w >> 24)}
		check("set _NET_ACTIVE_WINDOW", xproto.ChangePropertyChecked(conn, xproto.PropModeReplace, root, active, xproto.AtomWindow, 32, 1, v).Check())
	}
	focus := func(w xproto.Window) {
		check("SetInputFocus", xproto.SetInputFocusChecked(conn, xproto.InputFocusParent, w, xproto.TimeCurrentTime).Check())
		if got := strings.TrimSpace(harness.Command(t, "xdotool", "getwindowfocus")); got != fmt.Sprint(uint32(w)) {
			t.Fatalf("xdotool getwindowfocus = %s, want %d", got, w)
		}
	}
	want := func(step string, focused xproto.Window) {
		t.Helper()
		wins, err := b.Windows(t.Context())
		check("Windows", err)
		for _, id := range ids {
			one, err := b.Window(t.Context(), uint32(id))
			check("Window", err)
			i := slices.IndexFunc(wins, func(w x11.Window) bool { return w.ID == uint32(id) })
			if i < 0 {
				t.Fatalf("%s: 0x%x not listed", step, id)
			}
			if w := id == focused; wins[i].Focused != w || one.Focused != w {
				t.Errorf("%s: 0x%x Focused = %v (list) / %v (alone), want %v", step, id, wins[i].Focused, one.Focused, w)
			}
		}
	}
	setActive(ids[0])
	focus(ids[1])
	want("the property names the first, the focus is on the second", ids[0])
	check("delete _NET_ACTIVE_WINDOW", xproto.DeletePropertyChecked(conn, root, active).Check())
	want("no property: the focus, read after a read that had the property", ids[1])
	want("no property, again", ids[1])
	focus(ids[0])
	want("no property, the focus moved", ids[0])
	setActive(ids[1])
	want("the property is back", ids[1])
}

// standIn stops the window manager and connects a client that plays its part: it returns
// the connection, the root window and a function that interns an atom.
func standIn(t *testing.T) (*xgb.Conn, xproto.Window, func(string) xproto.Atom) {
	t.Helper()
	harness.StopWindowManager(t)
	conn, err := xgb.NewConnDisplay("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	atom := func(name string) xproto.Atom {
		r, err := xproto.InternAtom(conn, false, uint16(len(name)), name).Reply()
		if err != nil {
			t.Fatal(err)
		}
		return r.Atom
	}
	return conn, xproto.Setup(conn).DefaultScreen(conn).Root, atom
}
