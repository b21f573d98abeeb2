package personui

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Text layout is pure and measured in character cells: the fonts are monospaced, so a
// line's width in pixels is its length times the cell width. Every string that comes from a
// request goes through sanitize and is cut to its field, so it can never produce a line, a
// column or a glyph of its own.

const (
	dialogCols  = 72 // characters per dialog line
	valueCol    = 13 // where field values start; labels sit in columns 0..11
	commandRows = 4  // rows a command line may wrap over
	ellipsis    = "..."

	indicatorCols = 96 // characters of the indicator's session list
	labelMax      = 32 // characters of one session label in the indicator
)

// textLine is one line of text at a character cell position.
type textLine struct {
	Row, Col int
	// Text is printable Latin-1, one byte per character.
	Text string
	Bold bool
}

// sanitize returns s as printable Latin-1 (bytes 0x20–0x7e and 0xa0–0xff), one byte per
// character: invalid UTF-8 and characters outside Latin-1 become '?', the backslash and
// control characters are escaped (\\, \n, \r, \t, \xHH), so nothing in s can break a line,
// move the pen or hide a character. The soft hyphen, which may draw as nothing, is escaped.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteByte('?')
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r >= 0x7f && r < 0xa0 || r == 0xad:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r > 0xff:
			b.WriteByte('?')
		default:
			b.WriteByte(byte(r))
		}
	}
	return b.String()
}

// truncate cuts s (already sanitized) to at most n characters, ending in an ellipsis when
// it cut. n must be larger than the ellipsis.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-len(ellipsis)] + ellipsis
}

// middle cuts s (already sanitized) to at most n characters by taking out its middle, so
// that its beginning and its end both show.
func middle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	keep := n - len(ellipsis)
	return s[:keep/2] + ellipsis + s[len(s)-(keep-keep/2):]
}

// splitPath returns a path's folder and name ("/a/b", "c" for "/a/b/c").
func splitPath(p string) (dir, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	if i == 0 {
		return "/", p[1:]
	}
	return p[:i], p[i+1:]
}

// wrap cuts s (already sanitized) into lines of at most width characters, at most rows of
// them, the last ending in an ellipsis when s did not fit.
func wrap(s string, width, rows int) []string {
	var out []string
	for len(s) > 0 && len(out) < rows {
		if len(s) <= width {
			out = append(out, s)
			s = ""
			break
		}
		if len(out) == rows-1 {
			out = append(out, truncate(s, width))
			break
		}
		out = append(out, s[:width])
		s = s[width:]
	}
	if len(out) == 0 {
		out = append(out, "")
	}
	return out
}

// field returns a request string for display: sanitized, or "(unknown)" when empty.
func field(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return sanitize(s)
}

// quoted returns field(s) between double quotes, with the quotes inside escaped.
func quoted(s string) string {
	if s == "" {
		return "(untitled)"
	}
	return `"` + strings.ReplaceAll(sanitize(s), `"`, `\"`) + `"`
}

// layoutDialog lays out the dialog's text. Labels and fixed sentences are the package's
// own; request values start at valueCol and stay on their row (a command may wrap over
// commandRows rows, each starting at valueCol).
func layoutDialog(r Request) []textLine {
	const width = dialogCols - valueCol
	var lines []textLine
	row := 0
	fixed := func(text string, bold bool) {
		lines = append(lines, textLine{Row: row, Text: text, Bold: bold})
		row++
	}
	value := func(label, v string) {
		lines = append(lines, textLine{Row: row, Text: label},
			textLine{Row: row, Col: valueCol, Text: truncate(v, width)})
		row++
	}
	fixed("An agent asks for permission", true)
	value("Session:", field(r.Session)+" ("+field(r.Mode)+" mode)")
	value("Tool:", field(r.Tool))
	value("Wants to:", r.Operation.String()+" "+r.Resource.Kind.noun())
	res := r.Resource
	switch res.Kind {
	case ResourceWindow:
		value("Window:", quoted(res.Title))
		fallthrough
	case ResourceProcess:
		value("Program:", field(res.App))
		value("Executable:", field(res.Executable))
		pid := "(unknown)"
		if res.PID > 0 {
			pid = strconv.Itoa(res.PID)
		}
		value("Process id:", pid)
	case ResourceFile:
		// The file's name on its own row, whole as far as it fits; the folder over the
		// remaining rows, cut in its middle when it is longer, so both ends show.
		dir, name := splitPath(res.Path)
		value("File:", field(name))
		for i, l := range wrap(middle(field(dir), width*(commandRows-1)), width, commandRows-1) {
			if i == 0 {
				lines = append(lines, textLine{Row: row, Text: "In folder:"})
			}
			lines = append(lines, textLine{Row: row, Col: valueCol, Text: l})
			row++
		}
	case ResourceCommand:
		for i, l := range wrap(field(res.Command), width, commandRows) {
			if i == 0 {
				lines = append(lines, textLine{Row: row, Text: "Command:"})
			}
			lines = append(lines, textLine{Row: row, Col: valueCol, Text: l})
			row++
		}
	}
	row++
	fixed(`"Allow once" allows this one call. "`+grantLabel(r.SessionGrant)+`" allows`, false)
	fixed("calls of this session to the same target and operation until then.", false)
	return lines
}

// noun names what a resource kind's operation applies to.
func (k ResourceKind) noun() string {
	switch k {
	case ResourceWindow:
		return "a window"
	case ResourceProcess:
		return "a process"
	case ResourceDisplay:
		return "the whole display"
	case ResourceClipboard:
		return "the clipboard"
	case ResourceCommand:
		return "a command"
	case ResourceFile:
		return "a file"
	}
	return "something unknown"
}

// grantLabel is the AllowForSession button's label.
func grantLabel(d time.Duration) string {
	if d <= 0 {
		return "Allow for this session"
	}
	return "Allow for " + formatDuration(d)
}

// formatDuration writes d for a person: "30 s", "15 min", "2 h", "1 h 30 min".
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int((d+time.Second-1)/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Round(time.Minute)/time.Minute))
	}
	d = d.Round(time.Minute)
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	if m == 0 {
		return fmt.Sprintf("%d h", h)
	}
	return fmt.Sprintf("%d h %d min", h, m)
}

// dialogButtons are the dialog's buttons, left to right.
func dialogButtons(r Request) []buttonSpec {
	return []buttonSpec{
		{Name: Deny.String(), Label: "Deny", answer: Deny},
		{Name: AllowOnce.String(), Label: "Allow once", answer: AllowOnce},
		{Name: AllowForSession.String(), Label: grantLabel(r.SessionGrant), answer: AllowForSession},
	}
}

// buttonSpec is a button before it is placed.
type buttonSpec struct {
	Name, Label string
	answer      Answer
}

// layoutIndicator returns the indicator's one line: "Agent sessions active: a (standard),
// b (bounded)", at most indicatorCols characters, ending in "and N more" when not every
// session fits.
// indicatorHead starts the indicator's text.
const indicatorHead = "Agent sessions active: "

func layoutIndicator(sessions []Session) string {
	const head = indicatorHead
	items := make([]string, len(sessions))
	for i, s := range sessions {
		control := ""
		if s.PersonInControl {
			control = "; you have control"
		}
		items[i] = truncate(field(s.Label), labelMax) + " (" + truncate(field(s.Mode), 16) + control + ")"
	}
	text := head
	for i, it := range items {
		sep := ""
		if i > 0 {
			sep = ", "
		}
		more := ""
		if rest := len(items) - i - 1; rest > 0 {
			more = fmt.Sprintf(", and %d more", rest)
		}
		if len(text)+len(sep)+len(it)+len(more) > indicatorCols {
			if i == 0 {
				return truncate(text+it, indicatorCols-len(more)) + more
			}
			return text + fmt.Sprintf(", and %d more", len(items)-i)
		}
		text += sep + it
	}
	return text
}
