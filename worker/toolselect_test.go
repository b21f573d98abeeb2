package worker

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/client"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
	"github.com/cua-host/cua-host/x11"
)

// selectSession creates an unrestricted session with the host's tool selection over a raw
// CreateSession frame and returns its session channel, or the control error.
func (h *testHost) selectSession(label string, only, exclude []string) (*client.Conn, *cuav1.ControlError) {
	h.t.Helper()
	req := &cuav1.CreateSession{Label: label, Mode: authz.ModeToProto(authz.Unrestricted), TtlSeconds: 3600, IdleTtlSeconds: 3600,
		Tools: only, ExcludeTools: exclude}
	mine, theirs, err := wire.SessionPair()
	if err != nil {
		h.t.Fatal(err)
	}
	reply := h.request(&cuav1.ControlFrame{Body: &cuav1.ControlFrame_CreateSession{CreateSession: req}}, theirs)
	theirs.Close()
	if e := reply.GetError(); e != nil {
		mine.Close()
		return nil, e
	}
	c, err := client.New(mine, client.Options{Generation: h.gen, Version: 1})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { c.Close() })
	return c, nil
}

// TestToolSelectionEnforced: the worker, not only the proxy, holds a session to the
// host's tool selection. A client on the raw session channel that calls a tool left out —
// by exclude_tools, or by not being in tools — is refused permission_denied and the tool
// never runs (the recorder counts its runs); ListTools shows exactly the selection; the
// alias type_text_chars is the tool it names; a bystander session without a selection
// keeps every tool.
func TestToolSelectionEnforced(t *testing.T) {
	desk := &fakeDesktop{}
	rec := &recorder{desk: desk, runs: map[string]int{}, args: map[string]json.RawMessage{}}
	t.Cleanup(rec.stop)
	h := startTestWorker(t, testWorkerOptions{register: rec.register, desk: desk})
	pid := spawn(t, "/usr/bin/sleep", "300")
	win := desk.add(pid, x11.Rect{X: 0, Y: 0, Width: 200, Height: 100}, "app")
	at := map[string]any{"pid": pid, "window_id": win, "x": 10, "y": 10}

	names := func(c *client.Conn) []string {
		t.Helper()
		tools, err := c.ListTools(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ti := range tools {
			out = append(out, ti.Name)
		}
		slices.Sort(out)
		return out
	}

	excl, e := h.selectSession("excluding", nil, []string{"click", "type_text_chars"})
	if e != nil {
		t.Fatalf("CreateSession(exclude click, type_text_chars): %s: %s", e.GetCode(), e.GetMessage())
	}
	for _, name := range []string{"click", "type_text", "type_text_chars"} {
		res := call(t, excl, name, at)
		expect(t, res, authz.CodePermissionDenied)
		if res.Refusal != nil && !strings.Contains(res.Refusal.Message, "not enabled in this session") {
			t.Errorf("refusal of %s = %q, want it to say the tool is not enabled", name, res.Refusal.Message)
		}
	}
	// Invalid arguments do not get past the selection either: the tool is not there.
	if res := call(t, excl, "click", map[string]any{"x": "nope"}); res.Refusal == nil || res.Refusal.Code != string(authz.CodePermissionDenied) {
		t.Errorf("click with bad arguments in a session without click = %+v, want permission_denied", res)
	}
	if n := rec.ran("excluding", "click") + rec.ran("excluding", "type_text"); n != 0 {
		t.Errorf("excluded tools ran %d times", n)
	}
	expect(t, call(t, excl, "zoom", at), "")
	if got := names(excl); slices.Contains(got, "click") || slices.Contains(got, "type_text") || !slices.Contains(got, "zoom") {
		t.Errorf("ListTools(exclude click, type_text) = %v", got)
	}

	only, e := h.selectSession("only", []string{"zoom", "noop"}, nil)
	if e != nil {
		t.Fatalf("CreateSession(tools zoom, noop): %s: %s", e.GetCode(), e.GetMessage())
	}
	expect(t, call(t, only, "zoom", at), "")
	expect(t, call(t, only, "noop", nil), "")
	for _, name := range []string{"click", "get_screen_size", "launch_app"} {
		expect(t, call(t, only, name, at), authz.CodePermissionDenied)
		if n := rec.ran("only", name); n != 0 {
			t.Errorf("%s, outside tools, ran %d times", name, n)
		}
	}
	if got := names(only); !slices.Equal(got, []string{"noop", "zoom"}) {
		t.Errorf("ListTools(tools zoom, noop) = %v, want exactly [noop zoom]", got)
	}

	all := h.mustSession("bystander", authz.Unrestricted, "")
	expect(t, call(t, all, "click", at), "")
	if got := names(all); !slices.Contains(got, "click") || !slices.Contains(got, "type_text") {
		t.Errorf("ListTools of a session without a selection = %v, want every tool", got)
	}
}

// TestToolSelectionRefusesBadNames: a selection naming a tool the worker does not serve,
// or a tool in both lists, refuses the session (invalid_request) instead of being
// ignored.
func TestToolSelectionRefusesBadNames(t *testing.T) {
	rec := &recorder{runs: map[string]int{}, args: map[string]json.RawMessage{}}
	h := startTestWorker(t, testWorkerOptions{register: rec.register})
	for _, tc := range []struct {
		name          string
		only, exclude []string
		want          string
	}{
		{"unknown", []string{"clik"}, nil, `unknown tool "clik"`},
		{"classified, not registered here", []string{"get_window_state"}, nil, `unknown tool "get_window_state"`},
		{"not exposed", nil, []string{"run_shell"}, `tool "run_shell" is classified but not one cua-host serves`},
		{"both lists", []string{"zoom"}, []string{"zoom"}, `tool "zoom" is in both lists`},
		{"empty name", []string{""}, nil, "an empty tool name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, e := h.selectSession("bad-"+strings.ReplaceAll(tc.name, " ", "-"), tc.only, tc.exclude)
			if c != nil || e.GetCode() != string(authz.CodeInvalidRequest) || !strings.Contains(e.GetMessage(), tc.want) {
				t.Errorf("CreateSession(tools %q, exclude_tools %q) = %v; want invalid_request saying %q", tc.only, tc.exclude, e, tc.want)
			}
		})
	}
}
