package host

import (
	"bytes"
	"context"
	"github.com/cua-host/cua-host/host/personui"
	"os"
	"strings"
	"testing"
	"time"
)

func TestPromptConsent(t *testing.T) {
	req := ConsentRequest{Session: "cli", Tool: "click", Resource: "window:pid=1,id=0x2", Operation: "input",
		Description: "session \"cli\" wants to send input to window 0x2 \"\x1b[2Jevil\" of process 1 (tool click)"}
	tests := []struct {
		name   string
		answer string
		want   ConsentDecision
	}{
		{name: "yes", answer: "y\n", want: ConsentDecision{Granted: true, TTL: time.Minute}},
		{name: "yes word", answer: " YES \n", want: ConsentDecision{Granted: true, TTL: time.Minute}},
		{name: "once", answer: "o\n", want: ConsentDecision{Granted: true}},
		{name: "no", answer: "n\n", want: ConsentDecision{}},
		{name: "empty", answer: "\n", want: ConsentDecision{}},
		{name: "anything else", answer: "sure\n", want: ConsentDecision{}},
		{name: "end of input", answer: "", want: ConsentDecision{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			w.WriteString(tt.answer)
			w.Close()
			var out bytes.Buffer
			got := promptConsent(context.Background(), r, &out, req, time.Minute)
			if got != tt.want {
				t.Errorf("promptConsent(%q) = %+v, want %+v", tt.answer, got, tt.want)
			}
			if strings.ContainsRune(out.String(), 0x1b) {
				t.Errorf("the prompt passed an escape sequence through: %q", out.String())
			}
			if !strings.Contains(out.String(), "window:pid=1,id=0x2") {
				t.Errorf("prompt %q does not name the resource", out.String())
			}
		})
	}
}

func TestPromptConsentTimesOut(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if got := promptConsent(ctx, r, &bytes.Buffer{}, ConsentRequest{}, time.Minute); got.Granted {
		t.Error("no answer granted")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v to give up", d)
	}
}

func TestConsentTTYWithoutTerminal(t *testing.T) {
	f := ConsentTTY(TTYConsentOptions{Path: "/nonexistent/tty"})
	if d := f(context.Background(), ConsentRequest{}); !d.Unavailable || d.Granted {
		t.Errorf("ConsentTTY without a terminal = %+v, want Unavailable", d)
	}
}

// TestDialogRequestFiles: a file read or write is put to the person as a file and that
// operation — not as "send input to a command".
func TestDialogRequestFiles(t *testing.T) {
	for _, tt := range []struct {
		op   string
		want personui.Operation
	}{{"read", personui.Read}, {"write", personui.Write}} {
		got := dialogRequest(ConsentRequest{Session: "s", Tool: "get_desktop_state", Operation: tt.op, Resource: "file:/home/u/.bashrc"}, "standard", 0)
		if got.Operation != tt.want || got.Resource.Kind != personui.ResourceFile || got.Resource.Path != "/home/u/.bashrc" {
			t.Errorf("%s: dialogRequest = %+v, want a file %s of /home/u/.bashrc", tt.op, got, tt.want)
		}
	}
}
