package host

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host/personui"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
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
		op := map[string]cuav1.ConsentOperation{"read": cuav1.ConsentOperation_CONSENT_OPERATION_READ, "write": cuav1.ConsentOperation_CONSENT_OPERATION_WRITE}[tt.op]
		req, err := consentRequestFromProto(&cuav1.ConsentRequest{Label: "s", Tool: "get_desktop_state", Operation: tt.op, Resource: "file:/home/u/.bashrc",
			Kind: cuav1.ConsentResourceKind_CONSENT_RESOURCE_KIND_FILE, Op: op, Path: "/home/u/.bashrc"})
		if err != nil {
			t.Fatal(err)
		}
		got := dialogRequest(req, "standard", 0)
		if got.Operation != tt.want || got.Resource.Kind != personui.ResourceFile || got.Resource.Path != "/home/u/.bashrc" {
			t.Errorf("%s: dialogRequest = %+v, want a file %s of /home/u/.bashrc", tt.op, got, tt.want)
		}
	}
}

// TestServeConsentUnknownEnums: a consent request whose kind or operation the host does
// not know reaches no provider and is answered with a refusal that says why; a known one
// reaches the provider with its kind, operation and path as typed values.
func TestServeConsentUnknownEnums(t *testing.T) {
	hostEnd, workerEnd, err := wire.ControlPair()
	if err != nil {
		t.Fatal(err)
	}
	hc, err := wire.NewControlConn(hostEnd)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	wc, err := wire.NewControlConn(workerEnd)
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	asked := make(chan ConsentRequest, 4)
	h := &Host{ctrl: hc, version: 1, log: slog.New(slog.DiscardHandler), opts: Options{Consent: func(_ context.Context, r ConsentRequest) ConsentDecision {
		asked <- r
		return ConsentDecision{Granted: true}
	}}}
	h.consentCtx, h.consentCancel = context.WithCancel(context.Background())
	defer h.consentCancel()
	file, read := cuav1.ConsentResourceKind_CONSENT_RESOURCE_KIND_FILE, cuav1.ConsentOperation_CONSENT_OPERATION_READ
	for i, tt := range []struct {
		kind cuav1.ConsentResourceKind
		op   cuav1.ConsentOperation
		want string // "" grants
	}{
		{file, read, ""},
		{cuav1.ConsentResourceKind(42), read, "unknown kind of resource"},
		{cuav1.ConsentResourceKind_CONSENT_RESOURCE_KIND_UNSPECIFIED, read, "unknown kind of resource"},
		{file, cuav1.ConsentOperation(42), "unknown operation"},
		{file, cuav1.ConsentOperation_CONSENT_OPERATION_UNSPECIFIED, "unknown operation"},
	} {
		callID := uint64(i + 1)
		h.serveConsent(callID, &cuav1.ConsentRequest{Label: "s", Tool: "zoom", Resource: "file:/tmp/x", Operation: "read", Kind: tt.kind, Op: tt.op, Path: "/tmp/x"})
		reply, _, err := wc.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if reply.GetCallId() != callID {
			t.Fatalf("reply for call %d, want %d", reply.GetCallId(), callID)
		}
		if tt.want == "" {
			r := <-asked
			if !reply.GetConsentDecision().GetGranted() || r.Kind != authz.ResourceFile || r.Op != authz.OpRead || r.Path != "/tmp/x" || r.Operation != "read" {
				t.Errorf("known request: reply %v, provider saw %+v", reply, r)
			}
			continue
		}
		e := reply.GetError()
		if e == nil || e.GetCode() != string(authz.CodeAuthorizationDeclined) || !strings.Contains(e.GetMessage(), tt.want) {
			t.Errorf("kind %d op %d: reply %v, want a declined error saying %q", tt.kind, tt.op, reply, tt.want)
		}
	}
	h.consentWG.Wait()
	if len(asked) != 0 {
		t.Errorf("the provider was asked %d unknown requests", len(asked))
	}
}
