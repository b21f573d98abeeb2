package mcpproxy

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawSession serves the proxy over a pair of pipes, as on stdio, and exchanges raw JSON-RPC
// lines with it, so that malformed input a real client would never send can be tested.
type rawSession struct {
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func startRaw(t *testing.T, p *Proxy) *rawSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &rawSession{in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() { r.done <- p.Server().Run(t.Context(), &mcp.IOTransport{Reader: inR, Writer: outW}) }()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-r.done:
		case <-time.After(5 * time.Second):
			t.Errorf("the server did not stop after end-of-file")
		}
		outR.Close()
	})
	r.roundTrip(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

func (r *rawSession) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// roundTrip sends one request and returns the response as a map.
func (r *rawSession) roundTrip(t *testing.T, line string) map[string]any {
	t.Helper()
	r.send(t, line)
	resp, err := r.out.ReadString('\n')
	if err != nil {
		t.Fatalf("read response to %s: %v", line, err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(resp), &m); err != nil {
		t.Fatalf("response %q: %v", resp, err)
	}
	return m
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

func TestRawJSONRPC(t *testing.T) {
	r := startRaw(t, New(fakeCaller{}, Options{}))
	tests := []struct {
		name     string
		line     string
		wantCode float64 // 0: a result
		check    func(t *testing.T, result map[string]any)
	}{
		{name: "unknown method", line: `{"jsonrpc":"2.0","id":1,"method":"compatibility/unknown"}`, wantCode: -32601},
		{name: "tools/call without params", line: `{"jsonrpc":"2.0","id":2,"method":"tools/call"}`, wantCode: -32600},
		{name: "tools/call params not an object", line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":[1]}`, wantCode: -32602},
		{name: "tools/call name not a string", line: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":7}}`, wantCode: -32602},
		{name: "tools/call without name", line: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{}}}`, wantCode: -32602},
		{name: "tools/call arguments array", line: `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":[]}}`, wantCode: -32602},
		{name: "tools/call arguments string", line: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":"{}"}}`, wantCode: -32602},
		{name: "tools/call forwards arguments", line: `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"a":[1,{"b":null}]},"_meta":{"session":"other"}}}`,
			check: func(t *testing.T, res map[string]any) {
				b, _ := json.Marshal(res["structuredContent"])
				if string(b) != `{"a":[1,{"b":null}]}` {
					t.Errorf("structuredContent = %s", b)
				}
			}},
		{name: "tools/list repairs schemas", line: `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`,
			check: func(t *testing.T, res map[string]any) {
				b, _ := json.Marshal(res["tools"])
				s := string(b)
				if !strings.Contains(s, `"name":"echo"`) || !strings.Contains(s, `"name":"bad_schema"`) {
					t.Errorf("tools = %s", s)
				}
				if !strings.Contains(s, `"inputSchema":{"type":"object"},"name":"bad_schema"`) {
					t.Errorf("bad_schema not repaired: %s", s)
				}
			}},
		{name: "ping", line: `{"jsonrpc":"2.0","id":10,"method":"ping"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := r.roundTrip(t, tc.line)
			if got := errCode(m); got != tc.wantCode {
				t.Fatalf("response %v: error code %v, want %v", m, got, tc.wantCode)
			}
			if tc.check != nil {
				res, _ := m["result"].(map[string]any)
				tc.check(t, res)
			}
		})
	}
}
