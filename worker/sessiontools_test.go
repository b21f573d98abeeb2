package worker

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/client"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
)

const labelsManifest = `version: 1
expires_after: 1h
idle_timeout: 30m
allow: {tools: [start_session, end_session, get_session, list_sessions, get_session_state, escalate_session, health_report]}
`

func structuredMap(t *testing.T, res client.Result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(res.Structured, &m); err != nil {
		t.Fatalf("structured %s: %v", res.Structured, err)
	}
	return m
}

// TestSessionLabels: labels live inside the channel's session. start_session starts one,
// calls carrying it run with the session's own authority, end_session ends only the label
// (calls carrying it are refused, the session goes on), start_session revives it, and no
// label ever widens what the session may do.
func TestSessionLabels(t *testing.T) {
	h := startTestWorker(t, testWorkerOptions{})
	c := h.mustSession("host-label", authz.Bounded, labelsManifest)

	if st := structuredMap(t, call(t, c, "get_session", nil)); st["client_kind"] != "direct" || st["transport"] != "daemon" || st["session"] != "host-label" {
		t.Errorf("get_session = %v, want the session reached directly (no client_kind or transport given)", st)
	}
	st := structuredMap(t, call(t, c, "start_session", map[string]any{"session": "demo", "capture_scope": "desktop"}))
	if st["session"] != "demo" || st["active"] != true || st["revived"] != false || st["capture_scope"] != "desktop" || st["effective_scope"] != "window" || st["desktop_unlocked"] != false {
		t.Fatalf("start_session = %v", st)
	}
	expect(t, call(t, c, "health_report", map[string]any{"session": "demo"}), "")
	// An unknown label starts implicitly.
	expect(t, call(t, c, "health_report", map[string]any{"session": "other"}), "")
	if st := structuredMap(t, call(t, c, "get_session", map[string]any{"session": "other"})); st["implicit"] != true || st["state"] != "active" {
		t.Fatalf("get_session(other) = %v, want an implicit active label", st)
	}
	list := structuredMap(t, call(t, c, "list_sessions", map[string]any{"limit": 2}))
	sessions, _ := list["sessions"].([]any)
	if len(sessions) != 2 || list["next_cursor"] != "2" {
		t.Fatalf("list_sessions(limit 2) = %v", list)
	}
	if first, _ := sessions[0].(map[string]any); first["session"] != "host-label" || first["implicit"] != true {
		t.Errorf("the session itself is listed first: %v", sessions[0])
	}
	rest := structuredMap(t, call(t, c, "list_sessions", map[string]any{"cursor": "2"}))
	if s, _ := rest["sessions"].([]any); len(s) != 1 || rest["next_cursor"] != nil {
		t.Fatalf("list_sessions(cursor 2) = %v", rest)
	}

	// Ending a label: calls carrying it are refused; the session and other labels go on.
	if st := structuredMap(t, call(t, c, "end_session", map[string]any{"session": "demo"})); st["session"] != "demo" || st["active"] != false {
		t.Fatalf("end_session(demo) = %v", st)
	}
	expect(t, call(t, c, "health_report", map[string]any{"session": "demo"}), authz.CodeSessionEnded)
	expect(t, call(t, c, "end_session", map[string]any{"session": "demo"}), authz.CodeSessionEnded)
	expect(t, call(t, c, "health_report", map[string]any{"session": "other"}), "")
	expect(t, call(t, c, "health_report", nil), "")
	if st := structuredMap(t, call(t, c, "start_session", map[string]any{"session": "demo"})); st["revived"] != true {
		t.Fatalf("start_session after end = %v, want revived", st)
	}
	expect(t, call(t, c, "health_report", map[string]any{"session": "demo"}), "")

	// Escalation is recorded, and changes nothing.
	st = structuredMap(t, call(t, c, "escalate_session", map[string]any{"session": "demo", "reason": "no_window_target", "detail": "need the desktop"}))
	if st["escalation_reason"] != "no_window_target" || st["effective_scope"] != "window" || st["desktop_unlocked"] != false {
		t.Fatalf("escalate_session = %v", st)
	}
	expect(t, call(t, c, "escalate_session", map[string]any{"session": "demo", "reason": "because"}), authz.CodeInvalidArguments)
	// The session tools' schemas are open, as the reference's are: other properties are
	// ignored (they touch no resource); every other tool's arguments stay strict.
	expect(t, call(t, c, "get_session_state", map[string]any{"session": "demo", "note": "x"}), "")
	expect(t, call(t, c, "health_report", map[string]any{"note": "x"}), authz.CodeInvalidArguments)
	// A label never reaches beyond the manifest.
	expect(t, call(t, c, "get_config", map[string]any{"session": "demo"}), authz.CodeOutsideManifest)
	expect(t, call(t, c, "health_report", map[string]any{"session": ""}), authz.CodeInvalidArguments)

	// Without a label, end_session ends the session itself.
	expect(t, call(t, c, "end_session", nil), "")
	expect(t, call(t, c, "health_report", map[string]any{"session": "other"}), authz.CodeSessionEnded)
}

// TestSessionReach: CreateSession's client_kind and transport are reported by get_session;
// values outside the contract's words refuse the session.
func TestSessionReach(t *testing.T) {
	h := startTestWorker(t, testWorkerOptions{})
	for _, tc := range []struct{ kind, transport, wantErr string }{
		{"mcp", "mcp_http", ""},
		{"cli", "cli", ""},
		{"agent", "mcp_http", "client_kind"},
		{"mcp", "carrier pigeon", "transport"},
	} {
		mine, theirs, err := wire.SessionPair()
		if err != nil {
			t.Fatal(err)
		}
		req := &cuav1.CreateSession{Label: "reach-" + tc.kind + "-" + strings.ReplaceAll(tc.transport, " ", "-"), Mode: authz.ModeToProto(authz.Unrestricted),
			TtlSeconds: 60, IdleTtlSeconds: 60, ClientKind: tc.kind, Transport: tc.transport}
		reply := h.request(&cuav1.ControlFrame{Body: &cuav1.ControlFrame_CreateSession{CreateSession: req}}, theirs)
		theirs.Close()
		if e := reply.GetError(); e != nil || tc.wantErr != "" {
			mine.Close()
			if e == nil || !strings.Contains(e.GetMessage(), tc.wantErr) {
				t.Errorf("CreateSession(%q, %q) = %v, want an error naming %s", tc.kind, tc.transport, e, tc.wantErr)
			}
			continue
		}
		c, err := client.New(mine, client.Options{Generation: h.gen, Version: 1})
		if err != nil {
			t.Fatal(err)
		}
		st := structuredMap(t, call(t, c, "get_session", nil))
		c.Close()
		if st["client_kind"] != tc.kind || st["transport"] != tc.transport {
			t.Errorf("get_session = %v, want client_kind %s transport %s", st, tc.kind, tc.transport)
		}
	}
}

// TestSessionLabelLimits: at most MaxLabels labels are active; ending one makes room; a
// cursor past the list (even one that would overflow) is refused, not a crash.
func TestSessionLabelLimits(t *testing.T) {
	h := startTestWorker(t, testWorkerOptions{})
	c := h.mustSession("limits", authz.Unrestricted, "")
	for i := range MaxLabels {
		expect(t, call(t, c, "health_report", map[string]any{"session": "l" + strconv.Itoa(i)}), "")
	}
	expect(t, call(t, c, "health_report", map[string]any{"session": "one-too-many"}), authz.CodeTooManyRequests)
	expect(t, call(t, c, "end_session", map[string]any{"session": "l0"}), "")
	expect(t, call(t, c, "health_report", map[string]any{"session": "one-too-many"}), "")
	expect(t, call(t, c, "health_report", map[string]any{"session": "l0"}), authz.CodeSessionEnded)
	for _, cursor := range []string{"9223372036854775807", "66", "-1", "x"} {
		expect(t, call(t, c, "list_sessions", map[string]any{"cursor": cursor}), authz.CodeInvalidArguments)
	}
	if st := structuredMap(t, call(t, c, "list_sessions", map[string]any{"cursor": "65"})); st["next_cursor"] != nil {
		t.Errorf("list_sessions at the end = %v, want no next cursor", st)
	}
}
