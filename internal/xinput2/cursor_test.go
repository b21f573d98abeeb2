package xinput2_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"testing"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xfixes"
	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/host/display"
	"github.com/cua-host/cua-host/internal/xinput2"
	"github.com/cua-host/cua-host/test/testkit"
	"github.com/cua-host/cua-host/test/xevlog/harness"
)

var skipReason string

func TestMain(m *testing.M) { os.Exit(testkit.CheckLeaks(run(m))) }

func run(m *testing.M) int {
	if skipReason = testkit.Missing("Xvfb"); skipReason != "" {
		return m.Run()
	}
	d, err := testkit.StartDisplay(display.Options{Width: 640, Height: 480})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer d.Close()
	testkit.SetEnv(d)
	xgb.Logger = log.New(io.Discard, "", 0)
	return m.Run()
}

// conn opens a connection with XInput 2.2 and XFIXES 4 ready, closed at cleanup.
func conn(t *testing.T) *xgb.Conn {
	t.Helper()
	testkit.Require(t, skipReason)
	c, err := xgb.NewConn()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if err := xinput2.Init(c); err != nil {
		t.Fatal(err)
	}
	harness.InitXFixes(t, c)
	return c
}

// addMaster creates a master pair named name and returns its pointer's id; it is removed at
// cleanup.
func addMaster(t *testing.T, c *xgb.Conn, name string) uint16 {
	t.Helper()
	if err := xinput2.AddMaster(c, name); err != nil {
		t.Fatal(err)
	}
	devs, err := xinput2.Devices(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		if d.Use == xinput2.MasterPointer && d.Name == name+" pointer" {
			t.Cleanup(func() { _ = xinput2.RemoveMaster(c, d.ID) })
			return d.ID
		}
	}
	t.Fatalf("no master pointer %q in %+v", name, devs)
	return 0
}

// glyphCursor creates a cursor from the core "cursor" font's glyph.
func glyphCursor(t *testing.T, c *xgb.Conn, glyph uint16) xproto.Cursor {
	t.Helper()
	font, err := xproto.NewFontId(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := xproto.OpenFontChecked(c, font, uint16(len("cursor")), "cursor").Check(); err != nil {
		t.Fatal(err)
	}
	cur, err := xproto.NewCursorId(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := xproto.CreateGlyphCursorChecked(c, cur, font, font, glyph, glyph+1, 0, 0, 0, 0xffff, 0xffff, 0xffff).Check(); err != nil {
		t.Fatal(err)
	}
	return cur
}

// cursorOf returns the serial of the cursor XFixes reports for c's client pointer.
func cursorOf(t *testing.T, c *xgb.Conn) uint32 {
	t.Helper()
	r, err := xfixes.GetCursorImage(c).Reply()
	if err != nil {
		t.Fatal(err)
	}
	return r.CursorSerial
}

// TestChangeCursor: XIChangeCursor on the root gives one master pointer a cursor of its
// own over the desktop; the core pointer keeps its cursor; None takes it away; a cursor id
// that names no cursor is the server's BadCursor.
func TestChangeCursor(t *testing.T) {
	c := conn(t)
	root := xproto.Setup(c).DefaultScreen(c).Root
	ptr := addMaster(t, c, "cursor test")
	core := cursorOf(t, c)
	// A second connection whose client pointer is the new master reads its cursor.
	m := conn(t)
	if err := xinput2.SetClientPointer(m, 0, ptr); err != nil {
		t.Fatal(err)
	}
	xproto.WarpPointer(m, 0, root, 0, 0, 0, 0, 300, 200)
	def := cursorOf(t, m)

	cur := glyphCursor(t, c, 68) // XC_gumby
	if err := xinput2.ChangeCursor(c, root, cur, ptr); err != nil {
		t.Fatalf("ChangeCursor: %v", err)
	}
	if got := cursorOf(t, m); got == def {
		t.Errorf("the master pointer still shows cursor %d after ChangeCursor", got)
	}
	if got := cursorOf(t, c); got != core {
		t.Errorf("the core pointer's cursor changed: %d, was %d", got, core)
	}
	if err := xinput2.ChangeCursor(c, root, 0, ptr); err != nil {
		t.Fatalf("ChangeCursor(None): %v", err)
	}
	if got := cursorOf(t, m); got != def {
		t.Errorf("after ChangeCursor(None) the master pointer shows %d, want its default %d", got, def)
	}
	if err := xinput2.ChangeCursor(c, root, xproto.Cursor(cur+100), ptr); err == nil {
		t.Error("ChangeCursor with a cursor id that names no cursor succeeded")
	}
}
