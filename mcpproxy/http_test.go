package mcpproxy

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const testToken = "tok-0123456789abcdefghijklmnopqrstuvwxyz"

func TestCheckToken(t *testing.T) {
	tests := []struct {
		name string
		tok  string
		ok   bool
	}{
		{name: "empty", tok: ""},
		{name: "31 characters", tok: strings.Repeat("a", 31)},
		{name: "32 characters", tok: strings.Repeat("a", 32), ok: true},
		{name: "4096 characters", tok: strings.Repeat("a", 4096), ok: true},
		{name: "4097 characters", tok: strings.Repeat("a", 4097)},
		{name: "32 multibyte characters", tok: strings.Repeat("é", 32), ok: true},
		{name: "space", tok: strings.Repeat("a", 20) + " " + strings.Repeat("a", 20)},
		{name: "tab", tok: strings.Repeat("a", 40) + "\t"},
		{name: "newline", tok: strings.Repeat("a", 40) + "\n"},
		{name: "no-break space", tok: strings.Repeat("a", 40) + "\u00a0"},
		{name: "control", tok: strings.Repeat("a", 40) + "\x01"},
		{name: "DEL", tok: strings.Repeat("a", 40) + "\x7f"},
		{name: "invalid UTF-8", tok: strings.Repeat("a", 40) + "\xff"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckToken(tc.tok)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckToken(%.12q…) = %v, want ok=%v", tc.tok, err, tc.ok)
			}
			if err != nil && len(tc.tok) >= 8 && strings.Contains(err.Error(), tc.tok) {
				t.Errorf("the error quotes the token: %v", err)
			}
		})
	}
}

func TestParseListenAddr(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" means refused
	}{
		{"127.0.0.1:8765", "127.0.0.1:8765"},
		{"127.0.0.1:0", "127.0.0.1:0"},
		{"127.1.2.3:80", "127.1.2.3:80"},
		{"localhost:8765", "127.0.0.1:8765"},
		{"LOCALHOST:1", "127.0.0.1:1"},
		{"[::1]:8765", "[::1]:8765"},
		{"[::ffff:127.0.0.1]:9", "127.0.0.1:9"},
		{"0.0.0.0:8765", ""},
		{"[::]:8765", ""},
		{":8765", ""},
		{"192.168.1.10:8765", ""},
		{"8.8.8.8:53", ""},
		{"example.com:80", ""},
		{"localhost.example.com:80", ""},
		{"[fe80::1%lo]:80", ""},
		{"127.0.0.1", ""},
		{"127.0.0.1:65536", ""},
		{"127.0.0.1:-1", ""},
		{"127.0.0.1:http", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseListenAddr(tc.in)
			if tc.want == "" {
				if err == nil {
					t.Errorf("ParseListenAddr(%q) = %q, want an error", tc.in, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ParseListenAddr(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

// bearer adds an Authorization header to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func TestServeHTTP(t *testing.T) {
	s := startStack(t, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.p.ServeHTTP(ctx, ln, testToken) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	}()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	hc := &http.Client{Transport: base, Timeout: 10 * time.Second}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`

	tests := []struct {
		name   string
		header map[string]string
		host   string
		want   int
	}{
		{name: "no token", want: http.StatusUnauthorized},
		{name: "wrong token", header: map[string]string{"Authorization": "Bearer " + strings.Repeat("x", 40)}, want: http.StatusUnauthorized},
		{name: "token prefix", header: map[string]string{"Authorization": "Bearer " + testToken[:len(testToken)-1]}, want: http.StatusUnauthorized},
		{name: "basic scheme", header: map[string]string{"Authorization": "Basic " + testToken}, want: http.StatusUnauthorized},
		{name: "foreign origin", header: map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://evil.example"}, want: http.StatusForbidden},
		{name: "foreign origin without token", header: map[string]string{"Origin": "https://evil.example"}, want: http.StatusForbidden},
		{name: "null origin", header: map[string]string{"Authorization": "Bearer " + testToken, "Origin": "null"}, want: http.StatusForbidden},
		{name: "other loopback port origin", header: map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://localhost:1"}, want: http.StatusForbidden},
		{name: "foreign host", header: map[string]string{"Authorization": "Bearer " + testToken}, host: "evil.example", want: http.StatusForbidden},
		{name: "valid", header: map[string]string{"Authorization": "Bearer " + testToken}, want: http.StatusOK},
		{name: "valid, lowercase scheme, same-origin", header: map[string]string{"Authorization": "bearer " + testToken, "Origin": "http://" + addr}, want: http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(init))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatalf("POST: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status = %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer WWW-Authenticate challenge")
			}
		})
	}

	// A real streamable client with the token.
	ct := &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: &http.Client{Transport: bearer{testToken, base}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "0"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatalf("streamable Connect: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("ListTools over HTTP = %v, %v", tools, err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "noop"})
	if err != nil || res.IsError {
		t.Fatalf("CallTool(noop) over HTTP = %+v, %v", res, err)
	}
	// Without the token the same client is refused.
	bad := &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: &http.Client{Transport: base}, MaxRetries: -1}
	if cs2, err := mcp.NewClient(&mcp.Implementation{Name: "no-token", Version: "0"}, nil).Connect(t.Context(), bad, nil); err == nil {
		cs2.Close()
		t.Errorf("streamable Connect without a token succeeded")
	}
}

func TestServeHTTPRefusesBadSetup(t *testing.T) {
	p := New(fakeCaller{}, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.ServeHTTP(t.Context(), ln, "short"); err == nil {
		t.Errorf("ServeHTTP with a short token: no error")
	}
	if _, err := ln.Accept(); err == nil {
		t.Errorf("the listener stayed open after a refused ServeHTTP")
	}
}
