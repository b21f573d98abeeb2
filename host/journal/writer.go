package journal

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ErrUnavailable is wrapped by every Append error: the journal could not record, so the
// caller must not act.
var ErrUnavailable = errors.New("journal: unavailable")

// ErrClosed is wrapped by Append after Close.
var ErrClosed = errors.New("journal: closed")

// File names inside a segment directory.
const (
	// SegmentFile is the records file of a segment.
	SegmentFile = "journal.jsonl"
	// ShotsDir holds a segment's screenshots, each named <sha256>.png.
	ShotsDir = "shots"
)

// Default screenshot budget per session.
const (
	DefaultMaxShots     = 500
	DefaultMaxShotBytes = 128 << 20
)

// Options configures Open.
type Options struct {
	// Dir is the journal directory; Open creates it (0700) when missing and adds a new
	// segment directory inside it, chained to the newest segment there.
	Dir string
	// KeepText and Screenshots are recorded in the segment's first record; the writer
	// itself stores whatever it is given.
	KeepText    bool
	Screenshots bool
	// MaxShots and MaxShotBytes are each session's screenshot budget (count and bytes);
	// beyond it the session's oldest screenshots are removed (never records). Zero means
	// DefaultMaxShots and DefaultMaxShotBytes; negative means no limit.
	MaxShots     int
	MaxShotBytes int64
	// Version is the host's version, recorded in the first record.
	Version string
	// Logger receives the writer's logs; nil discards them. The segment's opening and its
	// closing, with its head, are logged at info level.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// file, when set (tests), replaces the segment file after it is created.
	file func(*os.File) appendFile
}

type appendFile interface {
	io.Writer
	Sync() error
	Close() error
}

// allocator is an appendFile that can reserve disk space beyond its end without changing
// its size (fallocate with FALLOC_FL_KEEP_SIZE), and give it back (Release).
type allocator interface {
	Allocate(off, n int64) error
	Release(size int64) error
}

// osFile is the segment file: an *os.File that reserves space with fallocate.
type osFile struct{ *os.File }

func (f osFile) Allocate(off, n int64) error {
	for {
		err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, off, n)
		if err != unix.EINTR {
			return err
		}
	}
}

// Release frees the blocks reserved beyond size (truncating a file to its own size drops
// them on ext4, XFS and tmpfs).
func (f osFile) Release(size int64) error { return f.Truncate(size) }

// Reservation sizes (ADR 0008: credits).
const (
	// CreditRecordBytes is the room reserved for each record a credit stands for: a
	// credited entry is at most contract.JournalCreditEntryMax bytes, and JSON escaping
	// (\u003c for '<') makes a record at most six times its strings, plus the
	// session identity.
	CreditRecordBytes = 16 << 10
	// closeMargin is kept beyond the credits for the records that close sessions and the
	// segment, so that they can still be written when nothing else can.
	closeMargin = 64 << 10
	// allocChunk is the least the reservation grows by.
	allocChunk = 1 << 20
)

// ErrFull is wrapped by an Append error when the writer could not reserve room for a
// record without eating into the room it promised credited records: the record was not
// written, and the writer is not broken (a later Append may find room).
var ErrFull = errors.New("journal: no room left beside the reserved space")

// class says which reserved room a record may use.
type class int

const (
	// general records must leave the credits' room and the close margin intact.
	general class = iota
	// credited records were sent against a credit: they use its room, and are written
	// even when it runs short (the action they report is already running).
	credited
	// closing records (session ends, unknown outcomes, journal_end) may use the close
	// margin.
	closing
)

// Writer appends records to one segment. Its methods are safe for concurrent use. Any
// write error breaks it for good: every later Append fails with ErrUnavailable, so a torn
// record is never followed by one that claims to continue the chain.
type Writer struct {
	opts    Options
	log     *slog.Logger
	id      string
	dir     string
	shotDir string
	// number is the segment's place in the journal (Chain.Number).
	number uint64

	// mu guards the fields below.
	mu     sync.Mutex
	f      appendFile
	seq    uint64
	prev   string
	broken error
	closed bool
	// refs counts the records of this segment that reference each stored screenshot.
	refs map[string]int
	// budgets tracks each session's stored screenshots, oldest first.
	budgets map[string]*budget
	// size is the segment file's length; alloc is the end of the space reserved for it
	// (alloc ≥ size once reserving). credits counts the records granted and not yet
	// received; reserving is set by the first successful Grant.
	size      int64
	alloc     int64
	credits   int
	reserving bool
	// full, when set (Fill), makes the writer behave as on a full disk: reserving more
	// fails and a write past the reserved space fails with it.
	full error
}

type budget struct {
	shots []storedShot
	bytes int64
}

type storedShot struct {
	sha   string
	bytes int
}

// Open creates a new segment in opts.Dir and writes its journal_start record, which links
// the segment to the newest one already there (Start.Chain). It holds the directory's lock
// meanwhile, so that segments opened at the same time by other hosts still chain in one
// line, and the writer keeps a lock on its segment file until Close. The segment file and
// the screenshots are created close-on-exec and 0600/0400: no child process inherits them.
func Open(opts Options) (w *Writer, err error) {
	if opts.Dir == "" {
		return nil, errors.New("open journal: no directory")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxShots == 0 {
		opts.MaxShots = DefaultMaxShots
	}
	if opts.MaxShotBytes == 0 {
		opts.MaxShotBytes = DefaultMaxShotBytes
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	unlock, err := lockDir(opts.Dir, opts.Logger)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	defer unlock()
	chain, prevID, err := nextChain(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	var rnd [4]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("open journal: segment id: %w", err)
	}
	id := segmentID(opts.Now(), prevID, rnd[:])
	dir := filepath.Join(opts.Dir, id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	shotDir := filepath.Join(dir, ShotsDir)
	if err := os.Mkdir(shotDir, 0o700); err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	// Go opens every file close-on-exec.
	f, err := os.OpenFile(filepath.Join(dir, SegmentFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	lockSegment(f, opts.Logger)
	w = &Writer{opts: opts, log: opts.Logger, id: id, dir: dir, shotDir: shotDir, number: chain.Number, f: osFile{f}, refs: map[string]int{}, budgets: map[string]*budget{}}
	if opts.file != nil {
		w.f = opts.file(f)
	}
	defer func() {
		if err != nil {
			w.f.Close()
		}
	}()
	err = w.Append(Record{Kind: KindJournalStart, Start: &Start{
		Format: Format, HostPID: os.Getpid(), Version: opts.Version, KeepText: opts.KeepText, Screenshots: opts.Screenshots,
		MaxShots: opts.MaxShots, MaxShotBytes: opts.MaxShotBytes, Chain: chain,
	}}, nil)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	if chain.Prev == "" {
		w.log.Info("journal segment opened", "journal", opts.Dir, "segment", id, "number", chain.Number)
	} else {
		w.log.Info("journal segment opened", "journal", opts.Dir, "segment", id, "number", chain.Number,
			"follows", chain.Prev, "follows_records", chain.PrevRecords, "follows_head", chain.PrevHead, "follows_open", chain.PrevOpen)
	}
	return w, nil
}

// ID returns the segment's id.
func (w *Writer) ID() string { return w.id }

// Number returns the segment's place in the journal, from 1.
func (w *Writer) Number() uint64 { return w.number }

// Head returns the number of records written and the last one's hash: the head a later
// VerifyHead can be given.
func (w *Writer) Head() (records uint64, hash string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq, w.prev
}

// Dir returns the segment's directory.
func (w *Writer) Dir() string { return w.dir }

// Err returns why the writer is broken, or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.broken
}

// Append stores shot (a PNG, when r.Call.Screenshot is set and shot is not empty) under
// its SHA-256, fills in the screenshot's name and size, numbers and chains r, and appends
// it. When the record's session then exceeds its screenshot budget, the oldest of its
// screenshots are removed and a prune record follows. An error wraps ErrUnavailable (or
// ErrClosed) and means r was not recorded.
func (w *Writer) Append(r Record, shot []byte) error {
	return w.append(r, shot, general)
}

// AppendCredited is Append for a record sent against a credit (Grant): it spends one,
// uses the room reserved for it, and is written even when that room runs short, since
// the action it reports is already running. A screenshot that cannot be stored is
// replaced by a note rather than losing the record.
func (w *Writer) AppendCredited(r Record, shot []byte) error {
	return w.append(r, shot, credited)
}

// AppendClosing is Append for a record that closes a session or reports an outcome the
// host knows to be unknown: it may use the margin kept for them.
func (w *Writer) AppendClosing(r Record) error {
	return w.append(r, nil, closing)
}

func (w *Writer) append(r Record, shot []byte, c class) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c == credited && w.credits > 0 {
		w.credits--
	}
	if w.closed {
		return fmt.Errorf("%w: %w", ErrUnavailable, ErrClosed)
	}
	if w.broken != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, w.broken)
	}
	var stored *storedShot
	if len(shot) > 0 && r.Call != nil && r.Call.Screenshot != nil {
		s, err := w.storeShotLocked(shot)
		switch {
		case err != nil && c == credited:
			r.Call.Screenshot = &Shot{Width: r.Call.Screenshot.Width, Height: r.Call.Screenshot.Height, Scale: r.Call.Screenshot.Scale, Error: "not stored: " + err.Error()}
		case err != nil:
			w.broken = err
			w.log.Error("journal broken: cannot store a screenshot", "err", err)
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		default:
			r.Call.Screenshot.SHA256 = s.sha
			r.Call.Screenshot.Bytes = s.bytes
			stored = &s
		}
	}
	if err := w.appendLocked(&r, c); err != nil {
		if stored != nil {
			w.unrefLocked(stored.sha)
		}
		return err
	}
	if stored != nil && r.Session != nil {
		w.chargeLocked(r.Session, *stored)
	}
	return nil
}

// appendLocked numbers, chains and writes r, inside the room its class may use.
func (w *Writer) appendLocked(r *Record, c class) error {
	r.Seq = w.seq + 1
	r.Prev = w.prev
	r.Segment = w.id
	r.Time = w.opts.Now().UTC().Format(time.RFC3339Nano)
	line, hash, err := EncodeLine(r)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err) // nothing written: not broken
	}
	if len(line) > MaxLine {
		return fmt.Errorf("%w: record of %d bytes exceeds %d", ErrUnavailable, len(line), MaxLine)
	}
	if err := w.roomLocked(int64(len(line)), c); err != nil {
		return err
	}
	var n int
	if w.full != nil && w.size+int64(len(line)) > w.alloc {
		err = w.full
	} else {
		n, err = w.f.Write(line)
	}
	w.size += int64(n)
	if err != nil {
		w.broken = fmt.Errorf("write record %d: %w", r.Seq, err)
		w.log.Error("journal broken", "err", w.broken)
		return fmt.Errorf("%w: %v", ErrUnavailable, w.broken)
	}
	w.seq = r.Seq
	w.prev = hash
	return nil
}

// storeShotLocked writes png as shots/<sha256>.png unless this segment already holds it.
func (w *Writer) storeShotLocked(png []byte) (storedShot, error) {
	sum := sha256.Sum256(png)
	sha := hex.EncodeToString(sum[:])
	s := storedShot{sha: sha, bytes: len(png)}
	if w.refs[sha] > 0 {
		w.refs[sha]++
		return s, nil
	}
	if w.full != nil {
		return s, fmt.Errorf("store screenshot: %w", w.full)
	}
	final := filepath.Join(w.shotDir, sha+".png")
	tmp := filepath.Join(w.shotDir, "."+sha+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o400)
	if err != nil {
		return s, fmt.Errorf("store screenshot: %w", err)
	}
	_, werr := f.Write(png)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp)
		return s, fmt.Errorf("store screenshot: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		os.Remove(tmp)
		return s, fmt.Errorf("store screenshot: %w", err)
	}
	w.refs[sha] = 1
	return s, nil
}

func (w *Writer) unrefLocked(sha string) {
	w.refs[sha]--
	if w.refs[sha] <= 0 {
		delete(w.refs, sha)
		os.Remove(filepath.Join(w.shotDir, sha+".png"))
	}
}

// chargeLocked adds s to the session's budget and prunes its oldest screenshots beyond it.
func (w *Writer) chargeLocked(sess *Session, s storedShot) {
	b := w.budgets[sess.ID]
	if b == nil {
		b = &budget{}
		w.budgets[sess.ID] = b
	}
	b.shots = append(b.shots, s)
	b.bytes += int64(s.bytes)
	var pruned []string
	for len(b.shots) > 1 && ((w.opts.MaxShots > 0 && len(b.shots) > w.opts.MaxShots) || (w.opts.MaxShotBytes > 0 && b.bytes > w.opts.MaxShotBytes)) {
		old := b.shots[0]
		b.shots = b.shots[1:]
		b.bytes -= int64(old.bytes)
		pruned = append(pruned, old.sha)
	}
	if len(pruned) == 0 {
		return
	}
	// The prune record goes first: a screenshot is never missing without a record saying
	// it was removed. A file still referenced by another record of the segment stays.
	if err := w.appendLocked(&Record{Kind: KindPrune, Session: sess, Pruned: pruned}, general); err != nil {
		return
	}
	for _, sha := range pruned {
		w.unrefLocked(sha)
	}
}

// Close writes the journal_end record with reason, syncs the segment and closes it, and logs
// the segment's head at info level (segment, records, head) for a person to keep
// elsewhere: VerifyHead with it detects the segment being deleted later. It is idempotent;
// the error is the first one met.
func (w *Writer) Close(reason string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	var err error
	if w.broken == nil {
		err = w.appendLocked(&Record{Kind: KindJournalEnd, End: &End{Reason: reason}}, closing)
	}
	if a, ok := w.f.(allocator); ok && w.reserving {
		if rerr := a.Release(w.size); rerr != nil {
			w.log.Warn("journal: release the reserved space", "err", rerr)
		}
	}
	if serr := w.f.Sync(); serr != nil && err == nil {
		err = fmt.Errorf("sync journal: %w", serr)
	}
	if cerr := w.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close journal: %w", cerr)
	}
	w.log.Info("journal segment closed", "journal", w.opts.Dir, "segment", w.id, "number", w.number, "records", w.seq, "head", w.prev)
	return err
}

// roomLocked makes sure a record of need bytes of class c can be written without using
// the room promised to credited records (and, unless it is closing, the close margin),
// growing the reservation when it must. Without a reservation in force (no Grant yet, or
// a file that cannot reserve) there is nothing to protect and the write just runs.
func (w *Writer) roomLocked(need int64, c class) error {
	if !w.reserving {
		return nil
	}
	keep := int64(w.credits) * CreditRecordBytes
	if c != closing {
		keep += closeMargin
	}
	if w.size+need+keep <= w.alloc {
		return nil
	}
	err := w.growLocked(w.size + need + keep)
	if err == nil || c == credited {
		// A credited record is written whatever happens: its action is running.
		return nil
	}
	w.log.Warn("journal: cannot reserve room for a record; refusing it", "err", err)
	return fmt.Errorf("%w: %w: %v", ErrUnavailable, ErrFull, err)
}

// growLocked reserves the segment file's space up to at least end, in whole chunks.
func (w *Writer) growLocked(end int64) error {
	a, ok := w.f.(allocator)
	if !ok {
		return errors.New("the journal file cannot reserve space")
	}
	if end <= w.alloc {
		return nil
	}
	if w.full != nil {
		return w.full
	}
	from := max(w.alloc, w.size)
	to := (end + allocChunk - 1) / allocChunk * allocChunk
	if err := a.Allocate(from, to-from); err != nil {
		return fmt.Errorf("reserve %d bytes: %w", to-from, err)
	}
	w.alloc = to
	return nil
}

// Grant reserves disk space for n more credited records (beside the close margin and the
// credits already granted) and, when it could, counts them as granted: the host may then
// tell the worker it holds n more credits. An error means no space was reserved and
// nothing was granted: the file system is full or cannot reserve (then the worker keeps
// waiting for each BEGIN's acknowledgement).
func (w *Writer) Grant(n int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.broken != nil {
		return fmt.Errorf("%w: no credit from a closed or broken journal", ErrUnavailable)
	}
	end := w.size + int64(w.credits+n)*CreditRecordBytes + closeMargin
	if err := w.growLocked(end); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	w.reserving = true
	w.credits += n
	return nil
}

// Credits returns the number of credited records granted and not yet appended.
func (w *Writer) Credits() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.credits
}

// Fill makes the writer behave as if the disk were full, with err (for example
// syscall.ENOSPC) as the error: no more space can be reserved, writes into the space
// already reserved succeed, and a write past it fails. It is for fault injection.
func (w *Writer) Fill(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.full == nil {
		w.full = err
	}
}

// Break makes every later Append fail with ErrUnavailable and err, as a write error
// would. It is for fault injection (a full disk is hard to come by in a test).
func (w *Writer) Break(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken == nil {
		w.broken = err
	}
}
