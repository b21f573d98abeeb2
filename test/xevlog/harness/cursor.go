package harness

import (
	"testing"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xfixes"
	"github.com/jezek/xgb/xproto"

	"github.com/cua-host/cua-host/internal/xinput2"
)

// InitXFixes makes XFIXES (version 4) usable on c, failing t when the server lacks it.
func InitXFixes(t testing.TB, c *xgb.Conn) {
	t.Helper()
	ext, err := xproto.QueryExtension(c, uint16(len("XFIXES")), "XFIXES").Reply()
	if err != nil || !ext.Present {
		t.Fatalf("XFIXES: %v", err)
	}
	c.ExtLock.Lock()
	c.Extensions["XFIXES"] = ext.MajorOpcode
	c.ExtLock.Unlock()
	if _, err := xfixes.QueryVersion(c, 4, 0).Reply(); err != nil {
		t.Fatal(err)
	}
}

// CursorImage returns the cursor image XFixes reports for master pointer pointer (0: the
// core pointer), read on a fresh connection whose client pointer it is: the oracle for
// which cursor a pointer shows, outside the code that set it.
func CursorImage(t testing.TB, pointer uint16) *xfixes.GetCursorImageReply {
	t.Helper()
	c, err := xgb.NewConn()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	InitXFixes(t, c)
	if pointer != 0 {
		if err := xinput2.Init(c); err != nil {
			t.Fatal(err)
		}
		if err := xinput2.SetClientPointer(c, 0, pointer); err != nil {
			t.Fatal(err)
		}
	}
	img, err := xfixes.GetCursorImage(c).Reply()
	if err != nil {
		t.Fatalf("GetCursorImage: %v", err)
	}
	return img
}
