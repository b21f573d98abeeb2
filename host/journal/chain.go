package journal

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Segments of one journal are chained (format 3 on): the journal_start record of each
// names the segment before it and that segment's record count and last hash as they were
// when it began (Start.Chain), and the first segment is number 1. Open links a new segment
// to the newest one while it holds the journal directory's lock, so that two hosts opening
// segments at once still form one line; a writer holds a lock on its own segment file for
// its life, which tells the next Open whether that segment may still grow (Chain.PrevOpen).
//
// What the links cannot show is the newest segments being deleted: nothing comes after
// them. The head a host logs when it closes its segment, kept elsewhere, covers that
// (VerifyHead).

// lockWait bounds how long Open waits for another host opening a segment in the same
// directory.
const lockWait = 10 * time.Second

// idLayout is the time part of a segment's name; names sort in the order segments began.
const idLayout = "20060102T150405.000000Z"

// lockDir takes the journal directory's lock (flock on the directory) and returns its
// release. A file system without flock leaves the directory unlocked, with a warning.
func lockDir(dir string, log *slog.Logger) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock the journal directory: %w", err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return func() { f.Close() }, nil
		case err == unix.EINTR:
			continue
		case err != unix.EWOULDBLOCK:
			log.Warn("journal: cannot lock the journal directory; segments opened at the same time may not chain in one line", "dir", dir, "err", err)
			return func() { f.Close() }, nil
		case time.Now().After(deadline):
			f.Close()
			return nil, fmt.Errorf("lock the journal directory: another process has held it for %v", lockWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lockSegment marks f, a segment file its writer just created, as being written: the next
// Open sees the lock and records that the segment may still grow. The kernel drops the lock
// when the file is closed, or its process ends. A reader (ReadHead) holds the lock for a
// moment at most; a file that stays locked, or a file system without flock, leaves the
// segment unmarked, with a warning: the next segment then takes it as finished.
func lockSegment(f *os.File, log *slog.Logger) {
	deadline := time.Now().Add(time.Second)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return
		case err == unix.EINTR:
			continue
		case err != unix.EWOULDBLOCK || time.Now().After(deadline):
			log.Warn("journal: cannot lock the segment file", "file", f.Name(), "err", err)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// beingWritten reports whether a writer holds the lock on the segment file f.
func beingWritten(f *os.File) bool {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		switch err {
		case unix.EINTR:
			continue
		case nil:
			unix.Flock(int(f.Fd()), unix.LOCK_UN)
			return false
		}
		return err == unix.EWOULDBLOCK
	}
}

// listSegments lists the segment directories of a journal directory, oldest first; none
// is not an error.
func listSegments(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), SegmentFile)); err == nil {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// nextChain returns the link of a segment about to be added to the journal directory dir,
// and the name of the newest segment there ("" for none). Preconditions: the caller holds
// the directory's lock.
func nextChain(dir string) (*Chain, string, error) {
	segs, err := listSegments(dir)
	if err != nil {
		return nil, "", err
	}
	if len(segs) == 0 {
		return &Chain{Number: 1}, "", nil
	}
	prev, err := readHead(segs[len(segs)-1])
	if err != nil {
		return nil, "", err
	}
	c := &Chain{Number: prev.Number + 1, Prev: prev.Segment, PrevRecords: prev.Records, PrevHead: prev.Hash, PrevOpen: prev.Open}
	if prev.Number == 0 {
		// The newest segment is unchained (an older version wrote it) or its first record
		// is unreadable: count the segments instead.
		c.Number = uint64(len(segs)) + 1
	}
	return c, prev.Segment, nil
}

// segmentID names a segment begun at now, after the segment named prev: when the clock
// reads earlier than prev's time (it was set back), the name takes prev's time plus a
// microsecond, so that names keep the order of the chain.
func segmentID(now time.Time, prev string, rnd []byte) string {
	t := now.UTC()
	if len(prev) >= len(idLayout) {
		if pt, err := time.Parse(idLayout, prev[:len(idLayout)]); err == nil && !t.After(pt) {
			t = pt.Add(time.Microsecond)
		}
	}
	return t.Format(idLayout) + "-" + hex.EncodeToString(rnd)
}

// Head is the end of a journal's newest segment as its file holds it: what a host logs
// when it closes its segment, and what the next segment chains to.
type Head struct {
	// Segment is the segment's name; Number its place in the journal (0 when it is
	// unchained, or its first record is unreadable).
	Segment string `json:"segment"`
	Number  uint64 `json:"number,omitempty"`
	// Records is the last record's sequence number and Hash its hash (0 and empty for a
	// segment without a record).
	Records uint64 `json:"records"`
	Hash    string `json:"hash"`
	// Open is set when a host is still writing the segment: the head moves on.
	Open bool `json:"open,omitempty"`
}

// ReadHead returns the head of the journal in dir: the last record of its newest segment.
// It reads that segment's first and last lines only and does not verify anything; Verify
// does.
func ReadHead(dir string) (*Head, error) {
	segs, err := Segments(dir)
	if err != nil {
		return nil, err
	}
	return readHead(segs[len(segs)-1])
}

// readHead reads the head of the segment in dir.
func readHead(dir string) (*Head, error) {
	f, err := os.Open(filepath.Join(dir, SegmentFile))
	if err != nil {
		return nil, fmt.Errorf("read journal segment: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read journal segment: %w", err)
	}
	h := &Head{Segment: filepath.Base(dir), Open: beingWritten(f)}
	if err := h.decode(f, fi.Size()); err != nil {
		return nil, fmt.Errorf("read journal segment %s: %w", h.Segment, err)
	}
	return h, nil
}

// decode fills h's number, record count and hash from a segment file of size bytes: the
// number from its first record, the rest from its last complete line. When that line does
// not decode, the file is read from the start and the head is its last good record, as
// Verify finds it. An error means r could not be read.
func (h *Head) decode(r io.ReaderAt, size int64) error {
	h.Number, h.Records, h.Hash = 0, 0, ""
	if size == 0 {
		return nil
	}
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10)
	if line, err := readLine(br); err == nil {
		if l, err := DecodeLine(line); err == nil && l.Record.Kind == KindJournalStart && l.Record.Start != nil {
			if c := l.Record.Start.Chain; c != nil && c.check() == "" {
				h.Number = c.Number
			}
		}
	}
	line, err := lastLine(r, size)
	if err != nil {
		return err
	}
	if line != nil {
		if l, err := DecodeLine(line); err == nil {
			h.Records, h.Hash = l.Record.Seq, l.Hash
			return nil
		}
	}
	seg, err := readSegmentFrom(io.NewSectionReader(r, 0, size), h.Segment, false)
	if err != nil {
		return err
	}
	h.Records, h.Hash = uint64(seg.Report.Records), seg.Report.Head
	return nil
}

// lastLine returns the last line of a file of size bytes that ends with a newline, without
// it, ignoring a torn line after it; nil when there is none or it is longer than MaxLine.
func lastLine(r io.ReaderAt, size int64) ([]byte, error) {
	for window := min(int64(64<<10), size); ; window = min(2*window, size) {
		buf := make([]byte, window)
		if _, err := r.ReadAt(buf, size-window); err != nil && err != io.EOF {
			return nil, err
		}
		if end := bytes.LastIndexByte(buf, '\n'); end >= 0 {
			start := bytes.LastIndexByte(buf[:end], '\n') + 1
			switch {
			case end-start > MaxLine:
				return nil, nil
			case start > 0 || window == size:
				return buf[start:end], nil
			}
		}
		if window == size || window > 2*(MaxLine+1) {
			return nil, nil
		}
	}
}

// CheckLinks checks that each segment of a journal, listed oldest first, follows the one
// listed before it as its first record says (Start.Chain), and that the first is number 1:
// a segment deleted, reordered, renamed or shortened breaks a link. What it finds is added
// to the segments' reports (a segment missing is reported by the one after it, a segment
// shortened by itself). It needs the segments as ReadSegment returned them, Records aside.
func CheckLinks(segs []*Segment) {
	index := make(map[string]int, len(segs))
	intact := make([]bool, len(segs))
	for i, s := range segs {
		index[s.Report.ID] = i
		intact[i] = s.Report.Intact
	}
	lastChained := -1
	for i, s := range segs {
		rep := &s.Report
		if rep.Records == 0 {
			continue // its first record is unreadable: already reported
		}
		c := rep.Chain
		if c == nil {
			if lastChained >= 0 {
				s.fail(1, "has no link to the segment before it, though %s before it has one: an older version wrote it after a newer one, or it was rewritten without its link", segs[lastChained].Report.ID)
			}
			continue
		}
		lastChained = i
		if c.Number == 1 {
			if i > 0 {
				s.fail(1, "begins a journal (segment number 1), but segment %s comes before it: a segment of another journal, or renamed", segs[i-1].Report.ID)
			}
			continue
		}
		j, present := index[c.Prev]
		switch {
		case !present:
			s.fail(1, "%s", missingMessage(segs, i))
			continue
		case j == i:
			s.fail(1, "names itself as the segment before it")
			continue
		case j > i:
			s.fail(1, "follows segment %s, which is listed after it: segments reordered or renamed", c.Prev)
			continue
		case j < i-1:
			s.fail(1, "follows segment %s, but segment %s comes between them: a segment inserted, renamed or reordered", c.Prev, segs[j+1].Report.ID)
			continue
		}
		p := segs[j]
		if pc := p.Report.Chain; pc != nil && pc.Number+1 != c.Number {
			s.fail(1, "is segment number %d, but the segment before it, %s, is number %d", c.Number, p.Report.ID, pc.Number)
			continue // the link is wrong, not necessarily the segment it names
		}
		if !intact[j] {
			continue // its own problem is reported; its end cannot be trusted
		}
		have, want := uint64(p.Report.Records), c.PrevRecords
		switch {
		case have < want:
			p.fail(0, "its last %d record(s) were removed: segment %s began after its record %d (head %.12s…), and it ends at record %d", want-have, rep.ID, want, c.PrevHead, have)
		case want > 0 && want <= uint64(len(p.hashes)) && p.hashes[want-1] != c.PrevHead:
			p.fail(want, "does not match the head segment %s recorded for it when it began (%.12s…): rewritten", rep.ID, c.PrevHead)
		case have > want && !c.PrevOpen:
			p.fail(want+1, "comes after record %d, which segment %s recorded as this segment's end: records appended", want, rep.ID)
		}
	}
}

// missingMessage says which segments are missing before segs[i], whose link names a
// segment that is not there.
func missingMessage(segs []*Segment, i int) string {
	c := segs[i].Report.Chain
	lo := uint64(0) // the first missing number, when known
	switch {
	case i == 0:
		lo = 1
	case segs[i-1].Report.Chain != nil && segs[i-1].Report.Chain.Number < c.Number-1:
		lo = segs[i-1].Report.Chain.Number + 1
	}
	first := ""
	if lo == 1 {
		first = ", the journal's first"
	}
	if lo == 0 || lo == c.Number-1 {
		return fmt.Sprintf("the segment before this one, %s (number %d%s), is missing: deleted or moved", c.Prev, c.Number-1, first)
	}
	return fmt.Sprintf("segments number %d to %d are missing%s: deleted or moved; the last of them, before this one, is %s", lo, c.Number-1, first, c.Prev)
}

// fail adds a problem found across segments to s's report.
func (s *Segment) fail(seq uint64, format string, args ...any) {
	rep := &s.Report
	rep.Intact, rep.Complete, rep.CutOff = false, false, ""
	rep.Problems = append(rep.Problems, Problem{Seq: seq, Message: fmt.Sprintf(format, args...)})
	sort.SliceStable(rep.Problems, func(i, j int) bool { return rep.Problems[i].Seq < rep.Problems[j].Seq })
}

// ErrBadHead is wrapped by VerifyHead's error for a head that is not a SHA-256.
var ErrBadHead = errors.New("journal: a head is a SHA-256: 64 hexadecimal digits")

// Anchor is what VerifyHead found of a head kept elsewhere.
type Anchor struct {
	Hash string `json:"hash"`
	// Found is set when a record of the journal has that hash: every record up to it is
	// still there. Segment and Seq locate it; End is set when it is its segment's last.
	Found   bool   `json:"found"`
	Segment string `json:"segment,omitempty"`
	Seq     uint64 `json:"seq,omitempty"`
	End     bool   `json:"end,omitempty"`
	// After counts the records after it: in its segment and the segments listed after.
	After int `json:"after"`
}

// parseHead returns head in lowercase, or an error when it is not a SHA-256.
func parseHead(head string) (string, error) {
	h := strings.ToLower(head)
	if len(h) != 64 || !isLowerHex(h) {
		return "", fmt.Errorf("%w, not %q", ErrBadHead, truncate(head, 80))
	}
	return h, nil
}

// findHead looks for the record whose hash is hash among the segments' good records.
func findHead(segs []*Segment, hash string) *Anchor {
	a := &Anchor{Hash: hash}
	for _, s := range segs {
		if a.Found {
			a.After += len(s.hashes)
			continue
		}
		for k, h := range s.hashes {
			if h == hash {
				a.Found, a.Segment, a.Seq = true, s.Report.ID, uint64(k+1)
				a.End = k == len(s.hashes)-1
				a.After = len(s.hashes) - k - 1
				break
			}
		}
	}
	return a
}
