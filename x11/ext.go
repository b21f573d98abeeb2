package x11

import (
	"fmt"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// initExtension makes the extension name usable on c. It does what the xgb extension
// packages' Init functions do for requests — ask the server for the major opcode and record
// it in c.Extensions — but it does not register the extension's event and error decoders in
// xgb's process-wide tables. Init writes those tables while the reader goroutine of every
// connection of the process reads them, a data race as soon as two connections live in one
// process (a worker's backend beside another, the host's dialog beside its indicator).
// Nothing here consumes an extension event; an extension's errors still arrive, as xgb's
// generic error.
func initExtension(c *xgb.Conn, name string) error {
	r, err := xproto.QueryExtension(c, uint16(len(name)), name).Reply()
	if err != nil {
		return xerr("QueryExtension "+name, err)
	}
	if !r.Present {
		return fmt.Errorf("%w: the X server has no %s extension", ErrUnsupported, name)
	}
	c.ExtLock.Lock()
	c.Extensions[name] = r.MajorOpcode
	c.ExtLock.Unlock()
	return nil
}
