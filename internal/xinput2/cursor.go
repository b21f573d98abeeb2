package xinput2

import (
	"fmt"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// opChangeCursor is XIChangeCursor's minor opcode.
const opChangeCursor = 42

// ChangeCursor sets the cursor master pointer id shows while it is over win, or over a
// descendant of win that defines no cursor of its own for id or for everyone (XI2proto's
// XIChangeCursor, the per-device XDefineCursor). Cursor 0 (None) removes it: id then
// shows what the windows define for every pointer. Other master pointers, the core one
// included, are not affected. The server forgets it when the device or win goes away.
//
// Core errors (BadWindow, BadCursor) are returned; the XInput extension's own BadDevice is
// not: xgb drops extension errors it has no decoder for, as for every request here.
func ChangeCursor(c *xgb.Conn, win xproto.Window, cursor xproto.Cursor, id uint16) error {
	buf := request(c, opChangeCursor, 12)
	xgb.Put32(buf[4:], uint32(win))
	xgb.Put32(buf[8:], uint32(cursor))
	xgb.Put16(buf[12:], id)
	// bytes 14–15: pad
	if err := checked(c, buf); err != nil {
		return fmt.Errorf("XIChangeCursor 0x%x cursor 0x%x device %d: %w", uint32(win), uint32(cursor), id, err)
	}
	return nil
}
