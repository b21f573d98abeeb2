package journal

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Problem is one thing wrong with a segment. Seq is the record it is about (the line
// number when the line could not be decoded), 0 for the segment as a whole.
type Problem struct {
	Seq     uint64 `json:"seq"`
	Tool    string `json:"tool,omitempty"`
	Message string `json:"message"`
}

// String names the record and says what is wrong with it.
func (p Problem) String() string {
	if p.Seq == 0 {
		return p.Message
	}
	if p.Tool != "" {
		return fmt.Sprintf("record %d (%s): %s", p.Seq, p.Tool, p.Message)
	}
	return fmt.Sprintf("record %d: %s", p.Seq, p.Message)
}

// InFlight is a call that began and has no known outcome: it may or may not have happened.
type InFlight struct {
	Seq     uint64 `json:"seq"` // the call_begin record
	CallSeq uint64 `json:"call_seq"`
	Session string `json:"session"`
	Tool    string `json:"tool"`
}

// SegmentReport is what Verify found in one segment.
type SegmentReport struct {
	ID      string `json:"id"`
	Records int    `json:"records"`
	// Head is the last good record's hash: compare it with a copy kept elsewhere to detect
	// a rewrite of the whole chain.
	Head string `json:"head"`
	// Intact is true when every record decodes, matches its hash, chains to the one before
	// it and every referenced screenshot is present (or pruned) and matches its name.
	Intact bool `json:"intact"`
	// Complete is true when the segment ends with journal_end and no session was cut off.
	Complete bool `json:"complete"`
	// CutOff says why the segment is not complete.
	CutOff string `json:"cut_off,omitempty"`
	// Unknown lists calls whose outcome is unknown because the segment or their session
	// was cut off while they ran.
	Unknown  []InFlight `json:"unknown,omitempty"`
	Problems []Problem  `json:"problems,omitempty"`
	// Chain is the segment's link to the one before it, as its first record gives it.
	Chain *Chain `json:"chain,omitempty"`
	// Unchained is set when the first record has no link (an older version wrote the
	// segment): that a segment before it was deleted cannot be detected.
	Unchained bool `json:"unchained,omitempty"`
}

// OK reports whether the segment is intact and complete.
func (s *SegmentReport) OK() bool { return s.Intact && s.Complete }

// Report is what Verify found in a journal directory.
type Report struct {
	Dir      string          `json:"dir"`
	Segments []SegmentReport `json:"segments"`
	// Single is set when Dir is one segment's directory: the segment was checked alone,
	// not its links to the segments before and after it.
	Single bool `json:"single,omitempty"`
	// Anchor is what VerifyHead found of the head it was given.
	Anchor *Anchor `json:"anchor,omitempty"`
}

// OK reports whether every segment is intact and complete, and the anchored head, when
// one was given, was found.
func (r *Report) OK() bool {
	for i := range r.Segments {
		if !r.Segments[i].OK() {
			return false
		}
	}
	if r.Anchor != nil && !r.Anchor.Found {
		return false
	}
	return len(r.Segments) > 0
}

// Segments lists the segment directories of a journal directory, oldest first. A
// directory that is itself a segment (it holds journal.jsonl) is returned alone.
func Segments(dir string) ([]string, error) {
	if isSegment(dir) {
		return []string{dir}, nil
	}
	out, err := listSegments(dir)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read journal: %s holds no segment (no */%s)", dir, SegmentFile)
	}
	return out, nil
}

func isSegment(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, SegmentFile))
	return err == nil
}

// Verify checks every segment of a journal directory: the hash chain, the sequence, the
// screenshots, whether each segment ended in order, and the links between segments
// (CheckLinks). An error means the directory could not be read at all; what is wrong with
// its contents is in the report. Given one segment's directory, it checks that segment
// alone (Report.Single).
func Verify(dir string) (*Report, error) {
	rep, _, err := verify(dir)
	return rep, err
}

// VerifyHead is Verify, and also looks for head, a record hash kept elsewhere (the head a
// host logged when it closed its segment): the report is not OK when no record has it,
// which is how the newest segments being deleted, or the journal rewritten, shows. An
// error wrapping ErrBadHead means head is not a SHA-256.
func VerifyHead(dir, head string) (*Report, error) {
	h, err := parseHead(head)
	if err != nil {
		return nil, err
	}
	rep, segs, err := verify(dir)
	if err != nil {
		return nil, err
	}
	rep.Anchor = findHead(segs, h)
	return rep, nil
}

func verify(dir string) (*Report, []*Segment, error) {
	paths, err := Segments(dir)
	if err != nil {
		return nil, nil, err
	}
	rep := &Report{Dir: dir, Single: isSegment(dir)}
	segs := make([]*Segment, 0, len(paths))
	for _, p := range paths {
		seg, err := ReadSegment(p)
		if err != nil {
			return nil, nil, err
		}
		seg.Records = nil // only the report and the hashes are needed from here on
		segs = append(segs, seg)
	}
	if !rep.Single {
		CheckLinks(segs)
	}
	for _, seg := range segs {
		rep.Segments = append(rep.Segments, seg.Report)
	}
	return rep, segs, nil
}

// Segment is one segment as read: its good records (up to the first bad one) and what
// verification found.
type Segment struct {
	Dir     string
	Records []Record
	Report  SegmentReport
	// hashes are the good records' hashes, in order.
	hashes []string
}

// ShotPath returns the file of a screenshot of this segment.
func (s *Segment) ShotPath(sha string) string {
	return filepath.Join(s.Dir, ShotsDir, sha+".png")
}

// ReadSegment reads and verifies one segment directory. Reading stops at the first record
// that breaks the chain; Records holds the ones before it. The links between segments are
// not checked here (CheckLinks).
func ReadSegment(dir string) (*Segment, error) {
	f, err := os.Open(filepath.Join(dir, SegmentFile))
	if err != nil {
		return nil, fmt.Errorf("read journal segment: %w", err)
	}
	defer f.Close()
	return readSegmentFrom(f, dir, true)
}

// readSegmentFrom reads the records of the segment in dir from f, and checks its
// screenshots when shots is set.
func readSegmentFrom(f io.Reader, dir string, shots bool) (*Segment, error) {
	seg := &Segment{Dir: dir, Report: SegmentReport{ID: filepath.Base(dir), Intact: true}}
	rep := &seg.Report
	bad := func(seq uint64, tool, format string, args ...any) {
		rep.Intact = false
		rep.Problems = append(rep.Problems, Problem{Seq: seq, Tool: tool, Message: fmt.Sprintf(format, args...)})
	}

	type shotRef struct {
		seq  uint64
		tool string
		shot *Shot
	}
	var (
		refs     []shotRef
		pruned   = map[string]bool{}
		sessions = map[string]bool{}
		ended    = map[string]string{} // session id → end reason
		begun    = map[string]InFlight{}
		lastKind Kind
		prev     string
	)
	r := bufio.NewReaderSize(f, 64<<10)
	var lineNo uint64
	for {
		line, err := readLine(r)
		if err == io.EOF {
			break
		}
		lineNo++
		if err != nil {
			bad(lineNo, "", "%v", err)
			break
		}
		l, err := DecodeLine(line)
		if err != nil {
			var he *HashError
			if errors.As(err, &he) {
				bad(lineNo, "", "the record does not match its hash (modified)")
			} else {
				bad(lineNo, "", "%v", err)
			}
			break
		}
		rec := l.Record
		tool := ""
		if rec.Call != nil {
			tool = rec.Call.Tool
		}
		switch {
		case rec.Seq != lineNo:
			bad(lineNo, tool, "sequence number %d at line %d (records removed, inserted or reordered)", rec.Seq, lineNo)
		case rec.Prev != prev:
			bad(lineNo, tool, "does not chain to the record before it (prev %.12s…, want %.12s…)", rec.Prev, prev)
		case rec.Segment != rep.ID:
			bad(lineNo, tool, "belongs to segment %q, not %q", rec.Segment, rep.ID)
		case lineNo == 1 && rec.Kind != KindJournalStart:
			bad(lineNo, tool, "the first record is %s, not %s", rec.Kind, KindJournalStart)
		case lineNo > 1 && rec.Kind == KindJournalStart:
			bad(lineNo, tool, "a second %s", KindJournalStart)
		case lastKind == KindJournalEnd:
			bad(lineNo, tool, "a record after %s", KindJournalEnd)
		}
		if !rep.Intact {
			break
		}
		if msg := checkShape(&rec, sessions, ended); msg != "" {
			bad(lineNo, tool, "%s", msg)
			break
		}
		prev = l.Hash
		lastKind = rec.Kind
		seg.Records = append(seg.Records, rec)
		seg.hashes = append(seg.hashes, l.Hash)
		rep.Records++
		rep.Head = l.Hash
		switch rec.Kind {
		case KindJournalStart:
			rep.Chain = rec.Start.Chain
			rep.Unchained = rec.Start.Chain == nil
		case KindSessionStart:
			sessions[rec.Session.ID] = true
		case KindSessionEnd:
			ended[rec.Session.ID] = rec.End.Reason
		case KindCallBegin:
			begun[callKey(rec.Session.ID, rec.Call.Seq)] = InFlight{Seq: rec.Seq, CallSeq: rec.Call.Seq, Session: rec.Session.Label, Tool: rec.Call.Tool}
		case KindCallEnd:
			k := callKey(rec.Session.ID, rec.Call.Seq)
			if b, ok := begun[k]; ok && rec.Call.Outcome == "unknown" {
				rep.Unknown = append(rep.Unknown, b)
			}
			delete(begun, k)
		case KindPrune:
			for _, sha := range rec.Pruned {
				pruned[sha] = true
			}
		}
		if rec.Call != nil && rec.Call.Screenshot != nil && rec.Call.Screenshot.SHA256 != "" {
			refs = append(refs, shotRef{rec.Seq, rec.Call.Tool, rec.Call.Screenshot})
		}
	}
	if rep.Records == 0 && rep.Intact {
		bad(0, "", "the segment is empty")
	}

	// Screenshots: each referenced file matches its name and size, or was pruned.
	for _, ref := range refs {
		if !shots {
			break
		}
		if msg := checkShot(seg.ShotPath(ref.shot.SHA256), ref.shot, pruned[ref.shot.SHA256]); msg != "" {
			bad(ref.seq, ref.tool, "%s", msg)
		}
	}
	sort.Slice(rep.Problems, func(i, j int) bool { return rep.Problems[i].Seq < rep.Problems[j].Seq })

	// Completeness.
	for _, b := range begun {
		rep.Unknown = append(rep.Unknown, b)
	}
	sort.Slice(rep.Unknown, func(i, j int) bool { return rep.Unknown[i].Seq < rep.Unknown[j].Seq })
	var lost []string
	for id, reason := range ended {
		if reason == ReasonWorkerLost {
			lost = append(lost, id)
		}
	}
	switch {
	case !rep.Intact:
		rep.CutOff = ""
	case lastKind != KindJournalEnd:
		rep.CutOff = fmt.Sprintf("cut off after record %d: the segment has no %s record (the host crashed or was killed)", rep.Records, KindJournalEnd)
	case len(lost) > 0:
		rep.CutOff = fmt.Sprintf("cut off: the worker was lost (crashed or killed) while %d session(s) were open", len(lost))
	case len(begun) > 0:
		rep.CutOff = fmt.Sprintf("cut off: %d call(s) began and have no outcome", len(begun))
	case len(ended) < len(sessions):
		rep.CutOff = fmt.Sprintf("cut off: %d session(s) have no %s record", len(sessions)-len(ended), KindSessionEnd)
	default:
		rep.Complete = true
	}
	return seg, nil
}

func callKey(session string, seq uint64) string { return fmt.Sprintf("%s/%d", session, seq) }

// checkShape checks that rec carries what its kind needs and names sessions that exist.
func checkShape(rec *Record, sessions map[string]bool, ended map[string]string) string {
	needSession := func() string {
		if rec.Session == nil || rec.Session.ID == "" {
			return fmt.Sprintf("%s without a session", rec.Kind)
		}
		if !sessions[rec.Session.ID] {
			return fmt.Sprintf("%s for session %q, which has no %s record", rec.Kind, rec.Session.ID, KindSessionStart)
		}
		if _, done := ended[rec.Session.ID]; done {
			return fmt.Sprintf("%s for session %q after its %s", rec.Kind, rec.Session.ID, KindSessionEnd)
		}
		return ""
	}
	switch rec.Kind {
	case KindJournalStart:
		if rec.Start == nil {
			return "journal_start without its description"
		}
		switch c := rec.Start.Chain; {
		case rec.Start.Format >= FormatChained && c == nil:
			return fmt.Sprintf("journal_start of format %d without its link to the segment before", rec.Start.Format)
		case rec.Start.Format < FormatChained && c != nil:
			return fmt.Sprintf("journal_start of format %d with a link to the segment before", rec.Start.Format)
		case c != nil:
			if msg := c.check(); msg != "" {
				return msg
			}
		}
	case KindSessionStart:
		if rec.Session == nil || rec.Session.ID == "" {
			return "session_start without a session"
		}
		if sessions[rec.Session.ID] {
			return fmt.Sprintf("a second session_start for session %q", rec.Session.ID)
		}
		if rec.Manifest != "" {
			sum := sha256.Sum256([]byte(rec.Manifest))
			if hex.EncodeToString(sum[:]) != rec.Session.ManifestSHA256 {
				return fmt.Sprintf("session_start for session %q: the manifest does not match its SHA-256", rec.Session.ID)
			}
		}
	case KindCallBegin, KindCallEnd, KindCallRefused, KindCallReadOnly:
		if msg := needSession(); msg != "" {
			return msg
		}
		if rec.Call == nil || rec.Call.Tool == "" {
			return fmt.Sprintf("%s without a call", rec.Kind)
		}
	case KindPrune:
		if msg := needSession(); msg != "" {
			return msg
		}
	case KindSessionEnd:
		if msg := needSession(); msg != "" {
			return msg
		}
		if rec.End == nil {
			return "session_end without a reason"
		}
	case KindJournalEnd:
		if rec.End == nil {
			return "journal_end without a reason"
		}
	}
	return ""
}

// checkShot checks one screenshot file against its reference.
func checkShot(path string, ref *Shot, pruned bool) string {
	if len(ref.SHA256) != sha256.Size*2 || !isLowerHex(ref.SHA256) {
		return fmt.Sprintf("screenshot name %q is not a SHA-256", ref.SHA256)
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		if pruned {
			return ""
		}
		return fmt.Sprintf("screenshot %.12s… is missing and was not pruned", ref.SHA256)
	}
	if err != nil {
		return fmt.Sprintf("screenshot %.12s…: %v", ref.SHA256, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return fmt.Sprintf("screenshot %.12s…: %v", ref.SHA256, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != ref.SHA256 {
		return fmt.Sprintf("screenshot %.12s… does not match its hash (modified)", ref.SHA256)
	}
	if int(n) != ref.Bytes {
		return fmt.Sprintf("screenshot %.12s… is %d bytes, the record says %d", ref.SHA256, n, ref.Bytes)
	}
	return ""
}

// readLine returns the next line without its newline; a last line without one is an
// error (a torn write), as is a line longer than MaxLine.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf bytes.Buffer
	for {
		chunk, err := r.ReadSlice('\n')
		buf.Write(chunk)
		if buf.Len() > MaxLine+1 {
			return nil, fmt.Errorf("line longer than %d bytes", MaxLine)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && buf.Len() == 0:
			return nil, io.EOF
		case err == io.EOF:
			return nil, fmt.Errorf("the last line is incomplete (a torn write): %q", strings.ToValidUTF8(truncate(buf.String(), 40), "?"))
		default:
			return nil, err
		}
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
