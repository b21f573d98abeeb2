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
	// segment directory inside it.
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
	// Logger receives the writer's logs; nil discards them.
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

// Writer appends records to one segment. Its methods are safe for concurrent use. Any
// write error breaks it for good: every later Append fails with ErrUnavailable, so a torn
// record is never followed by one that claims to continue the chain.
type Writer struct {
	opts    Options
	log     *slog.Logger
	id      string
	dir     string
	shotDir string

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
}

type budget struct {
	shots []storedShot
	bytes int64
}

type storedShot struct {
	sha   string
	bytes int
}

// Open creates a new segment in opts.Dir and writes its journal_start record. The segment
// file and the screenshots are created close-on-exec and 0600/0400: no child process
// inherits them.
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
	var rnd [4]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("open journal: segment id: %w", err)
	}
	id := opts.Now().UTC().Format("20060102T150405.000000Z") + "-" + hex.EncodeToString(rnd[:])
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
	w = &Writer{opts: opts, log: opts.Logger, id: id, dir: dir, shotDir: shotDir, f: f, refs: map[string]int{}, budgets: map[string]*budget{}}
	if opts.file != nil {
		w.f = opts.file(f)
	}
	defer func() {
		if err != nil {
			w.f.Close()
		}
	}()
	err = w.Append(Record{Kind: KindJournalStart, Start: &Start{
		HostPID: os.Getpid(), Version: opts.Version, KeepText: opts.KeepText, Screenshots: opts.Screenshots,
		MaxShots: opts.MaxShots, MaxShotBytes: opts.MaxShotBytes,
	}}, nil)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	w.log.Debug("journal segment opened", "dir", dir)
	return w, nil
}

// ID returns the segment's id.
func (w *Writer) ID() string { return w.id }

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
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("%w: %w", ErrUnavailable, ErrClosed)
	}
	if w.broken != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, w.broken)
	}
	var stored *storedShot
	if len(shot) > 0 && r.Call != nil && r.Call.Screenshot != nil {
		s, err := w.storeShotLocked(shot)
		if err != nil {
			w.broken = err
			w.log.Error("journal broken: cannot store a screenshot", "err", err)
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		r.Call.Screenshot.SHA256 = s.sha
		r.Call.Screenshot.Bytes = s.bytes
		stored = &s
	}
	if err := w.appendLocked(&r); err != nil {
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

// appendLocked numbers, chains and writes r.
func (w *Writer) appendLocked(r *Record) error {
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
	if _, err := w.f.Write(line); err != nil {
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
	if err := w.appendLocked(&Record{Kind: KindPrune, Session: sess, Pruned: pruned}); err != nil {
		return
	}
	for _, sha := range pruned {
		w.unrefLocked(sha)
	}
}

// Close writes the journal_end record with reason, syncs the segment and closes it. It is
// idempotent; the error is the first one met.
func (w *Writer) Close(reason string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	var err error
	if w.broken == nil {
		err = w.appendLocked(&Record{Kind: KindJournalEnd, End: &End{Reason: reason}})
	}
	if serr := w.f.Sync(); serr != nil && err == nil {
		err = fmt.Errorf("sync journal: %w", serr)
	}
	if cerr := w.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close journal: %w", cerr)
	}
	return err
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
