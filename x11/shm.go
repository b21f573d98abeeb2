package x11

import (
	"fmt"
	"sync"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/shm"
	"github.com/jezek/xgb/xproto"
	"golang.org/x/sys/unix"
)

// captureState holds the MIT-SHM segment, reused across captures.
type captureState struct {
	// mu guards the fields below and serializes captures (the segment has one user).
	mu       sync.Mutex
	tried    bool   // an attach was attempted
	usable   bool   // the segment is attached on both sides
	failure  string // why SHM is not used
	seg      shm.Seg
	shmid    int
	mem      []byte
	size     int
	scratch  []byte // GetImage fallback copy target; reused
	encoders encoders
}

// ensureSHMLocked attaches a segment of at least size bytes. Preconditions: mu held.
func (s *captureState) ensureSHMLocked(c *xgb.Conn, size int) bool {
	if s.usable && s.size >= size {
		return true
	}
	if s.tried && !s.usable {
		return false
	}
	s.tried = true
	if s.usable {
		s.detachLocked(c)
	}
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, size, unix.IPC_CREAT|0o600)
	if err != nil {
		s.failure = fmt.Sprintf("shmget: %v", err)
		return false
	}
	mem, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
		s.failure = fmt.Sprintf("shmat: %v", err)
		return false
	}
	seg, err := shm.NewSegId(c)
	if err == nil {
		err = shm.AttachChecked(c, seg, uint32(id), false).Check()
	}
	// Mark for removal now: the kernel frees it once both sides detach.
	_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	if err != nil {
		_ = unix.SysvShmDetach(mem)
		s.failure = fmt.Sprintf("shm attach (the X server may be in another IPC namespace): %v", err)
		return false
	}
	s.seg, s.shmid, s.mem, s.size, s.usable = seg, id, mem, size, true
	return true
}

func (s *captureState) detachLocked(c *xgb.Conn) {
	if !s.usable {
		return
	}
	shm.Detach(c, s.seg)
	_ = unix.SysvShmDetach(s.mem)
	s.usable, s.mem, s.size = false, nil, 0
}

func (s *captureState) release(c *xgb.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.detachLocked(c)
	s.tried = true // no new segment after Close
}

// grabLocked reads the root area r as BGRX (4 bytes per pixel, stride r.Width*4). The
// returned slice is only valid until the next capture. Preconditions: mu held.
func (s *captureState) grabLocked(c *xgb.Conn, root xproto.Window, r Rect, useSHM bool) ([]byte, string, error) {
	n := r.Width * r.Height * 4
	if useSHM && s.ensureSHMLocked(c, n) {
		_, err := shm.GetImage(c, xproto.Drawable(root), int16(r.X), int16(r.Y), uint16(r.Width), uint16(r.Height),
			0xffffffff, xproto.ImageFormatZPixmap, s.seg, 0).Reply()
		if err == nil {
			return s.mem[:n], "mit-shm", nil
		}
		s.failure = fmt.Sprintf("shm GetImage: %v", err)
	}
	img, err := xproto.GetImage(c, xproto.ImageFormatZPixmap, xproto.Drawable(root),
		int16(r.X), int16(r.Y), uint16(r.Width), uint16(r.Height), 0xffffffff).Reply()
	if err != nil {
		return nil, "", xerr("GetImage", err)
	}
	if len(img.Data) < n {
		return nil, "", fmt.Errorf("x11: GetImage returned %d bytes, want %d (depth %d)", len(img.Data), n, img.Depth)
	}
	return img.Data[:n], "getimage", nil
}
