package display

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// watchCreated watches directory dir for a file named name to appear (created there, or
// moved in). The returned channel is closed once it has, including when it was there
// already; stop ends the watch and waits for its goroutine, and may be called more than
// once.
func watchCreated(dir, name string) (created <-chan struct{}, stop func(), err error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, nil, fmt.Errorf("inotify: %w", err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_ONLYDIR); err != nil {
		unix.Close(fd)
		return nil, nil, fmt.Errorf("inotify watch %s: %w", dir, err)
	}
	// A non-blocking descriptor goes to the runtime's poller: Close unblocks Read.
	f := os.NewFile(uintptr(fd), "inotify")
	ch := make(chan struct{})
	var once sync.Once
	seen := func() { once.Do(func() { close(ch) }) }
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 16*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
		for {
			n, err := f.Read(buf)
			if err != nil {
				return // closed by stop
			}
			if eventsName(buf[:n], name) {
				seen()
				return
			}
		}
	}()
	// Created before the watch began: nothing will report it.
	if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
		seen()
	}
	var stopOnce sync.Once
	return ch, func() {
		stopOnce.Do(func() {
			f.Close()
			<-done
		})
	}, nil
}

// eventsName reports whether one of the inotify events in buf names name.
func eventsName(buf []byte, name string) bool {
	for len(buf) >= unix.SizeofInotifyEvent {
		// struct inotify_event: wd int32, mask, cookie, len uint32, then len bytes of name
		// padded with NULs.
		n := int(binary.NativeEndian.Uint32(buf[12:16]))
		end := unix.SizeofInotifyEvent + n
		if end > len(buf) {
			return false
		}
		if string(bytes.TrimRight(buf[unix.SizeofInotifyEvent:end], "\x00")) == name {
			return true
		}
		buf = buf[end:]
	}
	return false
}
