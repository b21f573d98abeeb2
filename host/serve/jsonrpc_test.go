package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var decodeTests = []struct {
	name     string
	line     string
	wantCode int // 0: decodes
	wantID   string
	wantMsg  string
}{
	{name: "request", line: `{"jsonrpc":"2.0","id":1,"method":"status"}`},
	{name: "string id and params", line: `{"jsonrpc":"2.0","id":"a","method":"create_session","params":{"label":"x"}}`},
	{name: "notification", line: `{"jsonrpc":"2.0","method":"status"}`},
	{name: "null params", line: `{"jsonrpc":"2.0","id":2,"method":"status","params":null}`},
	{name: "not JSON", line: `{"jsonrpc":`, wantCode: CodeParseError, wantMsg: "not valid JSON"},
	{name: "two values", line: `{} {}`, wantCode: CodeParseError},
	{name: "empty", line: ``, wantCode: CodeInvalidRequest, wantMsg: "empty line"},
	{name: "batch", line: `[{"jsonrpc":"2.0","id":1,"method":"status"}]`, wantCode: CodeInvalidRequest, wantMsg: "batch"},
	{name: "number", line: `42`, wantCode: CodeInvalidRequest, wantMsg: "got number"},
	{name: "no version", line: `{"id":1,"method":"status"}`, wantCode: CodeInvalidRequest, wantID: "1", wantMsg: `"jsonrpc" must be "2.0"`},
	{name: "wrong version", line: `{"jsonrpc":"1.0","id":1,"method":"status"}`, wantCode: CodeInvalidRequest, wantID: "1"},
	{name: "no method", line: `{"jsonrpc":"2.0","id":1}`, wantCode: CodeInvalidRequest, wantID: "1", wantMsg: `"method" is missing`},
	{name: "method not a string", line: `{"jsonrpc":"2.0","id":1,"method":7}`, wantCode: CodeInvalidRequest, wantID: "1", wantMsg: `"method" must be`},
	{name: "empty method", line: `{"jsonrpc":"2.0","id":1,"method":""}`, wantCode: CodeInvalidRequest, wantID: "1"},
	{name: "object id", line: `{"jsonrpc":"2.0","id":{},"method":"status"}`, wantCode: CodeInvalidRequest, wantMsg: `"id" must be a string or a number, got object`},
	{name: "null id", line: `{"jsonrpc":"2.0","id":null,"method":"status"}`, wantCode: CodeInvalidRequest, wantMsg: `got null`},
	{name: "unknown member", line: `{"jsonrpc":"2.0","id":1,"method":"status","extra":1}`, wantCode: CodeInvalidRequest, wantID: "1", wantMsg: `unknown member "extra"`},
	{name: "array params", line: `{"jsonrpc":"2.0","id":1,"method":"status","params":[1]}`, wantCode: CodeInvalidParams, wantID: "1", wantMsg: `"params" must be an object, got array`},
	{name: "response from the app", line: `{"jsonrpc":"2.0","id":1,"result":{}}`, wantCode: CodeInvalidRequest, wantID: "1"},
}

func TestDecodeLine(t *testing.T) {
	for _, tt := range decodeTests {
		t.Run(tt.name, func(t *testing.T) {
			req, id, err := DecodeLine([]byte(tt.line))
			if tt.wantCode == 0 {
				if err != nil {
					t.Fatalf("DecodeLine(%s) = %v, want a request", tt.line, err)
				}
				if req.Method == "" {
					t.Errorf("DecodeLine(%s).Method is empty", tt.line)
				}
				return
			}
			if err == nil || err.Code != tt.wantCode {
				t.Fatalf("DecodeLine(%s) error = %v, want code %d", tt.line, err, tt.wantCode)
			}
			if string(id) != tt.wantID {
				t.Errorf("DecodeLine(%s) id = %s, want %q", tt.line, id, tt.wantID)
			}
			if !strings.Contains(err.Message, tt.wantMsg) {
				t.Errorf("DecodeLine(%s) message = %q, want it to contain %q", tt.line, err.Message, tt.wantMsg)
			}
		})
	}
}

// FuzzDecodeLine checks that any line decodes to a request or an error with a JSON-RPC
// code, never panics, and that a decoded request is well-formed.
func FuzzDecodeLine(f *testing.F) {
	for _, tt := range decodeTests {
		f.Add([]byte(tt.line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		req, id, err := DecodeLine(line)
		if err != nil {
			switch err.Code {
			case CodeParseError, CodeInvalidRequest, CodeInvalidParams:
			default:
				t.Fatalf("DecodeLine(%q) code %d", line, err.Code)
			}
			if id != nil && !json.Valid(id) {
				t.Fatalf("DecodeLine(%q) id %q is not JSON", line, id)
			}
			return
		}
		if req.Method == "" {
			t.Fatalf("DecodeLine(%q) decoded an empty method", line)
		}
		if req.Params != nil && jsonKind(req.Params) != "object" {
			t.Fatalf("DecodeLine(%q) params %s", line, req.Params)
		}
		if req.ID != nil && jsonKind(req.ID) != "string" && jsonKind(req.ID) != "number" {
			t.Fatalf("DecodeLine(%q) id %s", line, req.ID)
		}
	})
}

func TestLineReaderTooLong(t *testing.T) {
	long := strings.Repeat("x", MaxLine+10)
	lr := newLineReader(strings.NewReader(long + "\n" + `{"a":1}` + "\n"))
	if _, err := lr.next(); err != errLineTooLong {
		t.Fatalf("next() on a long line = %v, want errLineTooLong", err)
	}
	line, err := lr.next()
	if err != nil || string(line) != `{"a":1}` {
		t.Fatalf("next() after a long line = %q, %v; want the next line", line, err)
	}
}

// TestBadInputKeepsServing feeds the control stream bad lines and bad params: each gets
// a precise error, the host keeps serving, and nothing is started or granted. No display
// or worker is needed: every request here is refused before anything starts.
func TestBadInputKeepsServing(t *testing.T) {
	short, err := os.MkdirTemp("", "st") // t.TempDir is too long for socket paths
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(short) })
	s, err := New(Options{RuntimeDir: short})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.Run(context.Background(), inR, outW); outW.Close() }()
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 4<<20)
	ask := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatalf("write: %v", err)
		}
		if !sc.Scan() {
			t.Fatalf("no answer to %s", line)
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("answer %s is not JSON: %v", sc.Bytes(), err)
		}
		return m
	}
	tests := []struct {
		name, line, wantMsg string
		wantCode            float64
	}{
		{"garbage", `not json`, "not valid JSON", CodeParseError},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"grant_everything"}`, `"grant_everything"`, CodeMethodNotFound},
		{"label of the wrong type", `{"jsonrpc":"2.0","id":2,"method":"create_session","params":{"label":5}}`, `"label" must be a string`, CodeInvalidParams},
		{"unknown field", `{"jsonrpc":"2.0","id":3,"method":"create_session","params":{"label":"a","admin":true}}`, `unknown field "admin"`, CodeInvalidParams},
		{"label with a slash", `{"jsonrpc":"2.0","id":4,"method":"create_session","params":{"label":"a/../x"}}`, `"label" may contain only`, CodeInvalidParams},
		{"bad mode", `{"jsonrpc":"2.0","id":5,"method":"create_session","params":{"label":"a","mode":"root"}}`, `"mode"`, CodeInvalidParams},
		{"unrestricted without the flag", `{"jsonrpc":"2.0","id":6,"method":"create_session","params":{"label":"a","mode":"unrestricted"}}`, "dangerously_bypass_approvals", CodeInvalidParams},
		{"unrestricted outside the ceiling", `{"jsonrpc":"2.0","id":7,"method":"create_session","params":{"label":"a","mode":"unrestricted","dangerously_bypass_approvals":true}}`, "ceiling", CodeRefused},
		{"bad display", `{"jsonrpc":"2.0","id":8,"method":"create_session","params":{"label":"a","display":"remote:0"}}`, `"display"`, CodeInvalidParams},
		{"bad ttl", `{"jsonrpc":"2.0","id":9,"method":"create_session","params":{"label":"a","ttl":"forever"}}`, `"ttl"`, CodeInvalidParams},
		{"idle above ttl", `{"jsonrpc":"2.0","id":10,"method":"create_session","params":{"label":"a","ttl":60,"idle_ttl":120}}`, `"idle_ttl"`, CodeInvalidParams},
		{"bounded without manifest", `{"jsonrpc":"2.0","id":11,"method":"create_session","params":{"label":"a","mode":"bounded"}}`, `"manifest" is required`, CodeInvalidParams},
		{"bad inline manifest", `{"jsonrpc":"2.0","id":12,"method":"create_session","params":{"label":"a","mode":"bounded","manifest":"version: 9\nallow: 1\n"}}`, `"manifest"`, CodeInvalidParams},
		{"revoke unknown", `{"jsonrpc":"2.0","id":13,"method":"revoke_session","params":{"session":"ghost"}}`, `no session "ghost"`, CodeRefused},
		{"revoke without session", `{"jsonrpc":"2.0","id":14,"method":"revoke_session","params":{}}`, `"session" is required`, CodeInvalidParams},
		{"decision for nothing", `{"jsonrpc":"2.0","id":15,"method":"consent_decision","params":{"id":99,"granted":true}}`, "no pending consent request 99", CodeRefused},
		{"decision without granted", `{"jsonrpc":"2.0","id":16,"method":"consent_decision","params":{"id":1}}`, `"granted"`, CodeInvalidParams},
		{"status with params", `{"jsonrpc":"2.0","id":17,"method":"status","params":{"all":true}}`, `unknown field "all"`, CodeInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := ask(tt.line)
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != tt.wantCode || !strings.Contains(e["message"].(string), tt.wantMsg) {
				t.Errorf("answer to %s = %v, want code %v with %q", tt.line, m, tt.wantCode, tt.wantMsg)
			}
		})
	}
	st := ask(`{"jsonrpc":"2.0","id":"last","method":"status"}`)
	res, _ := st["result"].(map[string]any)
	if res == nil || len(res["workers"].([]any)) != 0 || len(res["sessions"].([]any)) != 0 {
		t.Errorf("status after bad input = %v, want no worker and no session", st)
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil after end-of-file", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after end-of-file")
	}
	for sc.Scan() {
	}
}
