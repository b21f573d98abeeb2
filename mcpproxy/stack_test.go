package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cua-host/cua-host/client"
	"github.com/cua-host/cua-host/host"
)

// testLogger logs to the test's output at debug level when CUA_TEST_VERBOSE is set.
func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("CUA_TEST_VERBOSE") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// stack is a real worker (the test binary re-executed, with the test-only tools), one
// session on it, the proxy on that session, and a go-sdk client connected in memory.
type stack struct {
	h    *host.Host
	conn *client.Conn
	p    *Proxy
	cs   *mcp.ClientSession
}

func startStack(t testing.TB, opts Options) *stack {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	log := testLogger(t)
	h, err := host.Start(ctx, host.Options{Logger: log})
	if err != nil {
		t.Fatalf("host.Start: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	f, _, err := h.CreateSessionChannel(ctx, host.SessionSpec{Label: "mcp-test"})
	if err != nil {
		t.Fatalf("CreateSessionChannel: %v", err)
	}
	conn, err := client.New(f, client.Options{Generation: h.GenerationBytes(), Version: h.ProtocolVersion(), Logger: log})
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	if opts.Logger == nil {
		opts.Logger = log
	}
	p := New(conn, opts)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := p.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stack-test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return &stack{h: h, conn: conn, p: p, cs: cs}
}

func (s *stack) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := s.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

// structured returns a result's structuredContent as a map.
func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("marshal structuredContent: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structuredContent %s is not an object: %v", b, err)
	}
	return m
}

// outcomeOf returns the outcome a tools/call result carries in _meta.
func outcomeOf(res *mcp.CallToolResult) any { return res.Meta["cua-host/outcome"] }

func refusalCode(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	r, _ := structured(t, res)["refusal"].(map[string]any)
	code, _ := r["code"].(string)
	return code
}

func TestListTools(t *testing.T) {
	s := startStack(t, Options{})
	res, err := s.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		byName[tl.Name] = tl
	}
	for _, want := range []string{"noop", "sleep", "marker", "health_report", "get_session", "get_config"} {
		if byName[want] == nil {
			t.Errorf("tools/list lacks %s; got %d tools", want, len(res.Tools))
		}
	}
	if byName["type_text_chars"] != nil {
		t.Errorf("tools/list lists the alias type_text_chars: the worker lists none")
	}
	hr := byName["health_report"]
	if hr == nil {
		t.FailNow()
	}
	if hr.Annotations == nil || !hr.Annotations.ReadOnlyHint {
		t.Errorf("health_report annotations = %+v, want readOnlyHint", hr.Annotations)
	}
	schema, _ := json.Marshal(hr.InputSchema)
	if !strings.Contains(string(schema), `"additionalProperties":false`) {
		t.Errorf("health_report inputSchema = %s, want the worker's schema", schema)
	}
	if _, err := s.cs.ListTools(t.Context(), &mcp.ListToolsParams{Cursor: "bogus"}); !isRPCError(err, jsonrpc.CodeInvalidParams) {
		t.Errorf("ListTools(cursor bogus) err = %v, want JSON-RPC %d", err, jsonrpc.CodeInvalidParams)
	}
}

func isRPCError(err error, code int64) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == code
}

func TestCallTool(t *testing.T) {
	s := startStack(t, Options{})
	dir := t.TempDir()
	path := filepath.Join(dir, "marker.txt")
	tests := []struct {
		name        string
		tool        string
		args        any
		wantError   bool
		wantOutcome string
		wantRefusal string
		wantText    string
	}{
		{name: "noop", tool: "noop", wantOutcome: "completed"},
		{name: "null arguments", tool: "noop", args: nil, wantOutcome: "completed"},
		{name: "marker", tool: "marker", args: map[string]any{"path": path, "marker": "m1"}, wantOutcome: "completed", wantText: "wrote m1"},
		{name: "unknown tool", tool: "no_such_tool", wantError: true, wantOutcome: "not_started", wantRefusal: "unclassified_tool"},
		{name: "hidden alias is forwarded and canonicalised", tool: "type_text_chars", args: map[string]any{"text": "x"},
			wantError: true, wantOutcome: "not_started", wantRefusal: "unclassified_tool", wantText: `"type_text"`},
		{name: "bad argument type", tool: "sleep", args: map[string]any{"ms": "soon"}, wantError: true, wantOutcome: "not_started", wantRefusal: "invalid_arguments"},
		{name: "panic", tool: "panic", wantError: true, wantOutcome: "unknown"},
		{name: "get_config", tool: "get_config", wantOutcome: "completed", wantText: "session mcp-test"},
		{name: "health_report", tool: "health_report", wantOutcome: "completed", wantText: "worker pid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := s.call(t, tc.tool, tc.args)
			st := structured(t, res)
			text := ""
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					text += tc.Text + "\n"
				}
			}
			if res.IsError != tc.wantError {
				t.Errorf("isError = %v, want %v (%s)", res.IsError, tc.wantError, text)
			}
			if outcomeOf(res) != tc.wantOutcome {
				t.Errorf("outcome = %v, want %s (structured %v)", outcomeOf(res), tc.wantOutcome, st)
			}
			if got := refusalCode(t, res); got != tc.wantRefusal {
				t.Errorf("refusal code = %q, want %q", got, tc.wantRefusal)
			}
			if tc.wantRefusal != "" && !strings.Contains(text, tc.wantRefusal+": ") {
				t.Errorf("text %q lacks %q", text, tc.wantRefusal+": ")
			}
			if !strings.Contains(text, tc.wantText) {
				t.Errorf("text %q lacks %q", text, tc.wantText)
			}
		})
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "m1\n" {
		t.Errorf("marker file = %q, %v; want \"m1\\n\"", got, err)
	}
	cfg := structured(t, s.call(t, "get_config", nil))
	limits, _ := cfg["limits"].(map[string]any)
	if limits["max_in_flight"] == nil || limits["max_session_frame_bytes"] == nil || limits["default_deadline_ms"] == nil {
		t.Errorf("get_config limits = %v", limits)
	}
	sess, _ := cfg["session"].(map[string]any)
	if sess["mode"] != "standard" || sess["label"] != "mcp-test" {
		t.Errorf("get_config session = %v", sess)
	}
}

func TestCallToolInvalidParams(t *testing.T) {
	s := startStack(t, Options{})
	tests := []struct {
		name string
		args any
	}{
		{name: "array", args: []int{1}},
		{name: "string", args: "x"},
		{name: "number", args: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "noop", Arguments: tc.args})
			if !isRPCError(err, jsonrpc.CodeInvalidParams) {
				t.Errorf("CallTool(noop, %v) err = %v, want JSON-RPC %d", tc.args, err, jsonrpc.CodeInvalidParams)
			}
		})
	}
	if _, err := s.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ""}); !isRPCError(err, jsonrpc.CodeInvalidParams) {
		t.Errorf("CallTool(\"\") err = %v, want JSON-RPC %d", err, jsonrpc.CodeInvalidParams)
	}
}

// TestCancelReachesWorker: a client cancellation reaches the worker as a Cancel, so a tool
// that would have written its marker after a sleep never does.
func TestCancelReachesWorker(t *testing.T) {
	s := startStack(t, Options{})
	path := filepath.Join(t.TempDir(), "late.txt")
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "marker_after_sleep", Arguments: map[string]any{"path": path, "marker": "late", "ms": 800}})
	if err == nil {
		t.Fatalf("CallTool returned no error after its context ended")
	}
	if el := time.Since(start); el > 700*time.Millisecond {
		t.Errorf("cancelled call took %v", el)
	}
	time.Sleep(time.Second)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("marker written after cancellation (stat err %v): the Cancel did not reach the worker", err)
	}
	// The session still works.
	if res := s.call(t, "noop", nil); res.IsError {
		t.Errorf("noop after a cancellation: isError")
	}
}

// TestCallDeadline: the proxy's deadline bounds a call, and the result says it may not
// have completed.
func TestCallDeadline(t *testing.T) {
	s := startStack(t, Options{CallTimeout: 200 * time.Millisecond})
	start := time.Now()
	res := s.call(t, "sleep", map[string]any{"ms": 5000})
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("call with a 200ms deadline took %v", el)
	}
	if !res.IsError {
		t.Errorf("isError = false, want true for a call past its deadline")
	}
	if o := outcomeOf(res); o == "completed" {
		t.Errorf("outcome = %v, want not_started or unknown", o)
	}
}

// TestWorkerGone: after the worker is gone every call is an isError result with a
// non-completed outcome, never a hang or a JSON-RPC failure of the whole session.
func TestWorkerGone(t *testing.T) {
	s := startStack(t, Options{})
	s.h.Close()
	res := s.call(t, "noop", nil)
	if !res.IsError || outcomeOf(res) == "completed" {
		t.Errorf("call after worker exit: isError=%v outcome=%v", res.IsError, outcomeOf(res))
	}
	if _, err := s.cs.ListTools(t.Context(), nil); !isRPCError(err, jsonrpc.CodeInternalError) {
		t.Errorf("ListTools after worker exit err = %v, want JSON-RPC %d", err, jsonrpc.CodeInternalError)
	}
}
