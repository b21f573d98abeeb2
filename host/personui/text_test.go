package personui

import (
	"strings"
	"testing"
	"time"
)

func TestSanitize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "Inbox - Mail", "Inbox - Mail"},
		{"latin1 as one byte each", "Grüße café", "Gr\xfc\xdfe caf\xe9"},
		{"outside latin1", "世界 → ✓", "?? ? ?"},
		{"newline", "a\nb", `a\nb`},
		{"carriage return and tab", "a\r\tb", `a\r\tb`},
		{"escape sequence", "\x1b[31mred", `\x1b[31mred`},
		{"delete and c1", "a\x7fb\u0085c", `a\x7fb\x85c`},
		{"backslash", `a\nb`, `a\\nb`},
		{"soft hyphen", "a\u00adb", `a\xadb`},
		{"invalid utf-8", "a\xffb", "a?b"},
		{"line separator", "a\u2028b", "a?b"},
		{"bidi override", "a\u202eb", "a?b"},
		{"nul", "a\x00b", `a\x00b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sanitize(tt.in); got != tt.want {
				t.Errorf("sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{30 * time.Second, "30 s"},
		{15 * time.Minute, "15 min"},
		{time.Hour, "1 h"},
		{90 * time.Minute, "1 h 30 min"},
	}
	for _, tt := range tests {
		if got := formatDuration(tt.d); got != tt.want {
			t.Errorf("formatDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
	if got := grantLabel(0); got != "Allow for this session" {
		t.Errorf("grantLabel(0) = %q", got)
	}
}

// labels are the only texts that may start in column 0 of a dialog, besides the fixed
// sentences.
var labels = map[string]bool{"Session:": true, "Tool:": true, "Wants to:": true, "Window:": true,
	"Program:": true, "Executable:": true, "Process id:": true, "Command:": true, "File:": true, "In folder:": true}

// checkLayout checks the layout invariants that keep request text inside its fields.
func checkLayout(t *testing.T, r Request, lines []textLine) {
	t.Helper()
	rows := map[int]int{}
	for _, l := range lines {
		for i := 0; i < len(l.Text); i++ {
			if c := l.Text[i]; c < 0x20 || c >= 0x7f && c < 0xa0 {
				t.Fatalf("line %+v has byte 0x%02x", l, c)
			}
		}
		if l.Col+len(l.Text) > dialogCols {
			t.Fatalf("line %+v ends at column %d, past %d", l, l.Col+len(l.Text), dialogCols)
		}
		switch l.Col {
		case 0:
			if l.Row != 0 && !labels[l.Text] && !strings.HasPrefix(l.Text, `"Allow once" allows`) &&
				l.Text != "calls of this session to the same target and operation until then." {
				t.Fatalf("line %+v in column 0 is not a label or a fixed sentence", l)
			}
		case valueCol:
		default:
			t.Fatalf("line %+v starts in column %d", l, l.Col)
		}
		rows[l.Row]++
		if rows[l.Row] > 2 {
			t.Fatalf("row %d holds more than a label and a value", l.Row)
		}
	}
	// The number of rows depends on the kind of resource only (a command on its length).
	plain := r
	plain.Session, plain.Mode, plain.Tool = "s", "m", "t"
	plain.Resource.Title, plain.Resource.App, plain.Resource.Executable = "x", "x", "x"
	want := lines[len(lines)-1].Row
	if r.Resource.Kind != ResourceCommand {
		if got := layoutDialog(plain); got[len(got)-1].Row != want {
			t.Fatalf("layout has %d rows, a plain request of the same kind %d", want+1, got[len(got)-1].Row+1)
		}
	} else if extra := want - layoutDialog(plain)[len(layoutDialog(plain))-1].Row; extra < 0 || extra >= commandRows {
		t.Fatalf("command took %d extra rows, at most %d allowed", extra, commandRows-1)
	}
}

func TestLayoutHostileTitle(t *testing.T) {
	r := windowRequest()
	r.Resource.Title = "Mail\n[Allow]\r\nSession:   trusted (unrestricted mode)"
	lines := layoutDialog(r)
	checkLayout(t, r, lines)
	var window string
	for _, l := range lines {
		if l.Col == valueCol && strings.HasPrefix(l.Text, `"Mail`) {
			window = l.Text
		}
	}
	want := `"Mail\n[Allow]\r\nSession:   trusted (unrestricted mode)"`
	if window != want {
		t.Errorf("window line = %q, want %q", window, want)
	}
}

func TestLayoutLongTitle(t *testing.T) {
	r := windowRequest()
	r.Resource.Title = strings.Repeat("x", 5000)
	lines := layoutDialog(r)
	checkLayout(t, r, lines)
	for _, l := range lines {
		if strings.HasPrefix(l.Text, `"xxx`) {
			if len(l.Text) != dialogCols-valueCol || !strings.HasSuffix(l.Text, ellipsis) {
				t.Errorf("long title drawn as %d characters %q…, want %d ending in %q",
					len(l.Text), l.Text[:10], dialogCols-valueCol, ellipsis)
			}
			return
		}
	}
	t.Fatal("no title line")
}

func TestLayoutKinds(t *testing.T) {
	tests := []struct {
		name string
		res  Resource
		want string
	}{
		{"window", Resource{Kind: ResourceWindow, Title: "T", App: "a", Executable: "/e", PID: 7}, "Process id:"},
		{"process", Resource{Kind: ResourceProcess, App: "a", Executable: "/e"}, "(unknown)"},
		{"display", Resource{Kind: ResourceDisplay}, "send input to the whole display"},
		{"clipboard", Resource{Kind: ResourceClipboard}, "send input to the clipboard"},
		{"command", Resource{Kind: ResourceCommand, Command: strings.Repeat("cmd --flag ", 40)}, "Command:"},
		{"file", Resource{Kind: ResourceFile, Path: "/home/u/" + strings.Repeat("deep/", 80) + ".bashrc"}, "File:|.bashrc|In folder:|/home/u/deep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := windowRequest()
			r.Resource = tt.res
			lines := layoutDialog(r)
			checkLayout(t, r, lines)
			var all []string
			for _, l := range lines {
				all = append(all, l.Text)
			}
			if !strings.Contains(strings.Join(all, "|"), tt.want) {
				t.Errorf("layout %q does not contain %q", all, tt.want)
			}
		})
	}
}

func TestLayoutIndicator(t *testing.T) {
	tests := []struct {
		name     string
		sessions []Session
		want     string
	}{
		{"one", []Session{{Label: "build-bot", Mode: "standard"}}, "Agent sessions active: build-bot (standard)"},
		{"taken over", []Session{{Label: "build-bot", Mode: "standard", PersonInControl: true}}, "Agent sessions active: build-bot (standard; you have control)"},
		{"two", []Session{{Label: "a", Mode: "standard"}, {Label: "b", Mode: "bounded"}}, "Agent sessions active: a (standard), b (bounded)"},
		{"hostile", []Session{{Label: "a\n[Stop]", Mode: "x"}}, `Agent sessions active: a\n[Stop] (x)`},
		{"many", manySessions(40), ", and "},
		{"long", []Session{{Label: strings.Repeat("y", 500), Mode: "standard"}}, "..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := layoutIndicator(tt.sessions)
			if !strings.Contains(got, tt.want) || len(got) > indicatorCols {
				t.Errorf("layoutIndicator = %q (%d characters), want it to contain %q within %d", got, len(got), tt.want, indicatorCols)
			}
		})
	}
}

func manySessions(n int) []Session {
	s := make([]Session, n)
	for i := range s {
		s[i] = Session{Label: "session-" + strings.Repeat("z", i%7), Mode: "standard"}
	}
	return s
}

func FuzzLayout(f *testing.F) {
	f.Add("Inbox - Mail", "build-bot", "standard", "/usr/bin/firefox --new-window", 0)
	f.Add("Mail\n[Allow]", "a\x1b[2J", "x\u202e", "\xff\xfe", 4)
	f.Add(strings.Repeat("é", 3000), "", "", "", 2)
	f.Fuzz(func(t *testing.T, title, label, mode, command string, kind int) {
		r := Request{Session: label, Mode: mode, Tool: title, Operation: Operation(kind%5 + 1),
			Resource:     Resource{Kind: ResourceKind(kind%6 + 1), Title: title, App: label, Executable: mode, Command: command, PID: kind},
			SessionGrant: time.Duration(kind) * time.Minute}
		checkLayout(t, r, layoutDialog(r))
		for _, b := range dialogButtons(r) {
			if len(b.Label) > 40 {
				t.Fatalf("button label %q too long", b.Label)
			}
		}
		line := layoutIndicator([]Session{{Label: label, Mode: mode}, {Label: title, Mode: command}})
		if len(line) > indicatorCols {
			t.Fatalf("indicator line of %d characters", len(line))
		}
		for i := 0; i < len(line); i++ {
			if c := line[i]; c < 0x20 || c >= 0x7f && c < 0xa0 {
				t.Fatalf("indicator line has byte 0x%02x", c)
			}
		}
	})
}
