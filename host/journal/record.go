package journal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Kind names what a record reports.
type Kind string

// Record kinds, in the order they usually appear in a segment.
const (
	// KindJournalStart opens a segment: the host, its version and the journal options.
	KindJournalStart Kind = "journal_start"
	// KindSessionStart: the worker created a session (its identity is the record's Session).
	KindSessionStart Kind = "session_start"
	// KindCallBegin: a call was authorized and is about to run. The worker runs it only
	// once this record is written.
	KindCallBegin Kind = "call_begin"
	// KindCallEnd: the outcome of a call that began.
	KindCallEnd Kind = "call_end"
	// KindCallRefused: a call refused before it ran (outcome not_started).
	KindCallRefused Kind = "call_refused"
	// KindCallReadOnly: a read-only call, recorded once after it ran, with its outcome.
	KindCallReadOnly Kind = "call_read_only"
	// KindPrune: screenshots removed to keep a session inside its budget.
	KindPrune Kind = "prune"
	// KindSessionEnd: a session ended; End.Reason says how.
	KindSessionEnd Kind = "session_end"
	// KindJournalEnd closes a segment. A segment without it was cut off.
	KindJournalEnd Kind = "journal_end"
)

func (k Kind) valid() bool {
	switch k {
	case KindJournalStart, KindSessionStart, KindCallBegin, KindCallEnd, KindCallRefused, KindCallReadOnly, KindPrune, KindSessionEnd, KindJournalEnd:
		return true
	}
	return false
}

// Session end reasons (End.Reason of a session_end record).
const (
	// ReasonRevoked: the host revoked the session.
	ReasonRevoked = "revoked"
	// ReasonHostClosed: the host shut its worker down with the session still open.
	ReasonHostClosed = "host_closed"
	// ReasonWorkerLost: the worker died or broke the control channel while the host still
	// needed it (a crash or a kill): the session was cut off.
	ReasonWorkerLost = "worker_lost"
)

// Record is one journal entry. Seq, Prev, Segment, Time and Kind are always set; the other
// fields depend on Kind.
type Record struct {
	// Seq numbers the segment's records from 1.
	Seq uint64 `json:"seq"`
	// Prev is the hash of record Seq-1; empty for the first record.
	Prev string `json:"prev"`
	// Segment is the segment's id (its directory name).
	Segment string `json:"segment"`
	// Time is when the host wrote the record, RFC 3339 with nanoseconds, UTC.
	Time string `json:"time"`
	Kind Kind   `json:"kind"`
	// Session is the session's identity (session and call records).
	Session *Session `json:"session,omitempty"`
	// Start describes the segment (journal_start).
	Start *Start `json:"start,omitempty"`
	// Call describes a call (call_begin, call_end, call_refused).
	Call *Call `json:"call,omitempty"`
	// End says why a session or the segment ended (session_end, journal_end).
	End *End `json:"end,omitempty"`
	// Pruned lists the screenshots removed (prune).
	Pruned []string `json:"pruned,omitempty"`
	// Manifest is the bounded manifest the session was created with, as given (YAML);
	// its SHA-256 is Session.ManifestSHA256 (session_start, format 2 on).
	Manifest string `json:"manifest,omitempty"`
}

// Format is the version of the segment format this package writes, recorded in
// journal_start. Format 1 (no format field) lacks session_start's manifest; format 2 lacks
// the chain between segments (Start.Chain); readers accept all three.
const Format = 3

// FormatChained is the first format whose journal_start carries a Chain.
const FormatChained = 3

// Start describes a segment.
type Start struct {
	// Format is the segment format's version (Format); absent in format 1.
	Format      int    `json:"format,omitempty"`
	HostPID     int    `json:"host_pid"`
	Version     string `json:"version,omitempty"`
	KeepText    bool   `json:"keep_text"`
	Screenshots bool   `json:"screenshots"`
	// MaxShots and MaxShotBytes are each session's screenshot budget.
	MaxShots     int   `json:"max_shots"`
	MaxShotBytes int64 `json:"max_shot_bytes"`
	// Chain links the segment to the one before it (format 3 on; absent before).
	Chain *Chain `json:"chain,omitempty"`
}

// Chain is where a segment stands in its journal: its number and the end of the segment
// before it as it was when this one began. Deleting, reordering or shortening an earlier
// segment breaks the link of the segment after it.
type Chain struct {
	// Number is the segment's place in the journal, from 1. Number 1 begins the journal
	// and has no Prev.
	Number uint64 `json:"number"`
	// Prev is the name of the segment before this one; empty for number 1.
	Prev string `json:"prev,omitempty"`
	// PrevRecords and PrevHead are Prev's record count and the hash of its last record
	// when this segment began (0 and empty when Prev held no record).
	PrevRecords uint64 `json:"prev_records,omitempty"`
	PrevHead    string `json:"prev_head,omitempty"`
	// PrevOpen is set when another host was still writing Prev when this segment began:
	// Prev may hold more records after PrevRecords.
	PrevOpen bool `json:"prev_open,omitempty"`
}

// check says what is wrong with the link's own fields, or "".
func (c *Chain) check() string {
	switch {
	case c.Number == 0:
		return "chain: segment number 0"
	case c.Number == 1 && (c.Prev != "" || c.PrevRecords != 0 || c.PrevHead != "" || c.PrevOpen):
		return "chain: segment number 1 names a segment before it"
	case c.Number > 1 && c.Prev == "":
		return fmt.Sprintf("chain: segment number %d names no segment before it", c.Number)
	case c.Prev != "" && !validName(c.Prev):
		return "chain: the previous segment's name is not a directory name"
	case (c.PrevRecords == 0) != (c.PrevHead == ""):
		return "chain: the previous segment's record count and head disagree"
	case c.PrevHead != "" && (len(c.PrevHead) != sha256.Size*2 || !isLowerHex(c.PrevHead)):
		return "chain: the previous segment's head is not a SHA-256"
	}
	return ""
}

// Session is a session's identity. ID is random and unique to the segment; the label is
// the public label, which a later session may reuse.
type Session struct {
	ID         string `json:"id"`
	Label      string `json:"label"`
	Mode       string `json:"mode,omitempty"`
	Generation string `json:"generation,omitempty"`
	// ManifestSHA256 is the bounded manifest's digest.
	ManifestSHA256 string `json:"manifest_sha256,omitempty"`
	// ExpiresAt is the session's expiry, RFC 3339.
	ExpiresAt string `json:"expires_at,omitempty"`
}

// Call describes one call, or one part of it.
type Call struct {
	// Seq is the worker's number for the call; call_begin and call_end share it.
	Seq  uint64 `json:"seq"`
	Tool string `json:"tool"`
	// Arguments is the sanitized arguments object (text redacted unless the journal keeps
	// it); present on call_begin and call_refused.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Decision is "allow" or "deny"; Layer the stage that decided.
	Decision string `json:"decision,omitempty"`
	Layer    string `json:"layer,omitempty"`
	// Outcome is "not_started", "completed" or "unknown" (call_end, call_refused).
	Outcome string   `json:"outcome,omitempty"`
	Refusal *Refusal `json:"refusal,omitempty"`
	IsError bool     `json:"is_error,omitempty"`
	// Received is when the worker accepted the call (RFC 3339, UTC).
	Received string `json:"received,omitempty"`
	// AuthorizeUS and RunUS are the authorization and handler times in microseconds.
	AuthorizeUS int64 `json:"authorize_us,omitempty"`
	RunUS       int64 `json:"run_us,omitempty"`
	// Result holds the result's route, delivery, verified and evidence (call_end).
	Result json.RawMessage `json:"result,omitempty"`
	// Screenshot is the capture before (call_begin) or after (call_end) an action.
	Screenshot *Shot `json:"screenshot,omitempty"`
	// Target is where the action aimed, in root coordinates.
	Target *Rect `json:"target,omitempty"`
	// Note is the host's remark, for example why an outcome is unknown.
	Note string `json:"note,omitempty"`
}

// Refusal is a refusal's stable code and message.
type Refusal struct {
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
}

// Shot references a screenshot file.
type Shot struct {
	// SHA256 names the file shots/<SHA256>.png; empty when Error says why there is none.
	SHA256 string  `json:"sha256,omitempty"`
	Bytes  int     `json:"bytes,omitempty"`
	Width  int     `json:"width,omitempty"`
	Height int     `json:"height,omitempty"`
	Scale  float64 `json:"scale,omitempty"`
	Error  string  `json:"error,omitempty"`
}

// Rect is a rectangle in root coordinates; a point has Width and Height 0.
type Rect struct {
	X      int `json:"x"`
	Y      int `json:"y"`
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
}

// End says why a session or a segment ended.
type End struct {
	Reason string `json:"reason"`
}

// Line is one decoded line of a segment: the record, its exact bytes and its hash.
type Line struct {
	Hash   string
	Raw    []byte
	Record Record
}

// MaxLine bounds one line of a segment (a record with its arguments).
const MaxLine = 4 << 20

// ErrMalformed is wrapped by every error DecodeLine returns.
var ErrMalformed = errors.New("journal: malformed record")

type lineJSON struct {
	Hash   string
	Record []byte
}

// EncodeLine returns the line for r (with its trailing newline) and the record's hash.
func EncodeLine(r *Record) (line []byte, hash string, err error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, "", fmt.Errorf("encode record %d: %w", r.Seq, err)
	}
	sum := sha256.Sum256(raw)
	hash = hex.EncodeToString(sum[:])
	line = make([]byte, 0, len(raw)+len(hash)+24)
	line = append(line, `{"hash":"`...)
	line = append(line, hash...)
	line = append(line, `","record":`...)
	line = append(line, raw...)
	line = append(line, "}\n"...)
	return line, hash, nil
}

// DecodeLine decodes one line (without its newline) strictly: exactly the keys hash and
// record, a lowercase hex SHA-256 that matches the record's exact bytes, and a record
// with only known fields and a known kind. It never panics on any input.
func DecodeLine(b []byte) (Line, error) {
	if len(b) > MaxLine {
		return Line{}, fmt.Errorf("%w: line of %d bytes exceeds %d", ErrMalformed, len(b), MaxLine)
	}
	// The line must be exactly what EncodeLine writes: no other keys, no spacing, no
	// second record for a lenient reader to pick.
	const prefix, middle = `{"hash":"`, `","record":`
	n := len(prefix) + sha256.Size*2 + len(middle)
	if len(b) < n+2 || string(b[:len(prefix)]) != prefix || string(b[len(prefix)+sha256.Size*2:n]) != middle || b[len(b)-1] != '}' {
		return Line{}, fmt.Errorf("%w: not a {\"hash\":…,\"record\":…} line", ErrMalformed)
	}
	l := lineJSON{Hash: string(b[len(prefix) : len(prefix)+sha256.Size*2]), Record: b[n : len(b)-1]}
	if !isLowerHex(l.Hash) {
		return Line{}, fmt.Errorf("%w: hash is not a lowercase hex SHA-256", ErrMalformed)
	}
	if len(l.Record) == 0 || l.Record[0] != '{' {
		return Line{}, fmt.Errorf("%w: record is not an object", ErrMalformed)
	}
	sum := sha256.Sum256(l.Record)
	if got := hex.EncodeToString(sum[:]); got != l.Hash {
		return Line{}, &HashError{Stored: l.Hash, Computed: got}
	}
	var r Record
	if err := strictUnmarshal(l.Record, &r); err != nil {
		return Line{}, fmt.Errorf("%w: record: %v", ErrMalformed, err)
	}
	if !r.Kind.valid() {
		return Line{}, fmt.Errorf("%w: unknown kind %q", ErrMalformed, r.Kind)
	}
	if r.Seq == 0 {
		return Line{}, fmt.Errorf("%w: seq 0", ErrMalformed)
	}
	return Line{Hash: l.Hash, Raw: append([]byte(nil), l.Record...), Record: r}, nil
}

// HashError reports a record whose bytes do not match its stored hash.
type HashError struct {
	Stored, Computed string
}

// Error implements error.
func (e *HashError) Error() string {
	return fmt.Sprintf("journal: record hash mismatch: stored %.12s…, computed %.12s…", e.Stored, e.Computed)
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the object")
	}
	return nil
}

// validName reports whether s can name a segment directory: at most 255 printable ASCII
// characters, no slash, not "." or "..".
func validName(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 255 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' || s[i] == '/' {
			return false
		}
	}
	return true
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
