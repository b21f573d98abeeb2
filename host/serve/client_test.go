package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
)

// TestCreateSessionParamsRoundTrip: what the client writes for create_session is what
// the host's own decoder and checks read back.
func TestCreateSessionParamsRoundTrip(t *testing.T) {
	p := CreateSessionParams{Label: "agent-1", Mode: "standard", TTL: 2 * time.Hour, IdleTTL: 90 * time.Second,
		Display: "private", TrustDomain: "dom", HTTP: true, Tools: []string{"zoom"}, ExcludeTools: []string{"click"}}
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var cp createParams
	if e := decodeParams(raw, &cp); e != nil {
		t.Fatalf("the host's decoder refuses %s: %v", raw, e)
	}
	spec, e := checkCreate(cp, authz.DefaultCeiling())
	if e != nil {
		t.Fatalf("the host's checks refuse %s: %v", raw, e)
	}
	if spec.label != p.Label || spec.domain != p.TrustDomain || spec.mode != authz.Standard || spec.ttl != p.TTL ||
		spec.idleTTL != p.IdleTTL || spec.display != p.Display || !spec.http ||
		strings.Join(spec.tools.Only(), ",") != "zoom" || strings.Join(spec.tools.Exclude(), ",") != "click" {
		t.Errorf("%s read back as %+v", raw, spec)
	}
	// Zero values are left out: the host's defaults apply.
	raw, _ = json.Marshal(CreateSessionParams{Label: "x"})
	if string(raw) != `{"label":"x"}` {
		t.Errorf("zero params: %s", raw)
	}
}

// TestClientStream: responses reach the request with their id whatever their order,
// notifications reach OnNotification, garbage lines are skipped, a JSON-RPC error comes
// back as *Error, and a host that ends fails the requests still waiting.
func TestClientStream(t *testing.T) {
	hostIn, toHost := io.Pipe()
	fromHost, hostOut := io.Pipe()
	notes := make(chan string, 4)
	c := NewClient(fromHost, toHost, ClientOptions{OnNotification: func(m string, p json.RawMessage) { notes <- m + " " + string(p) }})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	type result struct {
		err  error
		list []SessionInfo
	}
	listed := make(chan result, 1)
	go func() {
		l, err := c.ListSessions(ctx)
		listed <- result{err, l}
	}()
	revoked := make(chan error, 1)
	go func() {
		_, err := c.RevokeSession(ctx, "nope")
		revoked <- err
	}()
	dec := json.NewDecoder(hostIn)
	ids := map[string]json.RawMessage{}
	for range 2 {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := dec.Decode(&req); err != nil {
			t.Fatal(err)
		}
		ids[req.Method] = req.ID
	}
	io.WriteString(hostOut, "not json\n")
	io.WriteString(hostOut, `{"jsonrpc":"2.0","method":"session_ended","params":{"session":"a"}}`+"\n")
	io.WriteString(hostOut, `{"jsonrpc":"2.0","id":`+string(ids["revoke_session"])+`,"error":{"code":-32000,"message":"no session \"nope\""}}`+"\n")
	io.WriteString(hostOut, `{"jsonrpc":"2.0","id":`+string(ids["list_sessions"])+`,"result":{"sessions":[{"label":"a","mode":"standard"}]}}`+"\n")
	if r := <-listed; r.err != nil || len(r.list) != 1 || r.list[0].Label != "a" {
		t.Errorf("list_sessions: %+v", r)
	}
	var e *Error
	if err := <-revoked; !errors.As(err, &e) || e.Code != CodeRefused {
		t.Errorf("revoke_session: %v, want a -32000 *Error", err)
	}
	if n := <-notes; n != `session_ended {"session":"a"}` {
		t.Errorf("notification %q", n)
	}

	waiting := make(chan error, 1)
	go func() { waiting <- c.Call(ctx, "status", nil, nil) }()
	if err := dec.Decode(new(map[string]any)); err != nil {
		t.Fatal(err)
	}
	hostOut.Close() // the host ends without answering
	if err := <-waiting; err == nil || !strings.Contains(err.Error(), "ended before answering") {
		t.Errorf("request outstanding at the end: %v", err)
	}
	<-c.Done()
	if err := c.Call(ctx, "status", nil, nil); !errors.Is(err, ErrClientClosed) {
		t.Errorf("request after the end: %v", err)
	}
}
