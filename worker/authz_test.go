package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/client"
	"github.com/cua-host/cua-host/policy"
	"github.com/cua-host/cua-host/proto/contract"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// scene is a worker with recording tools on a fake desktop holding three windows not
// launched by any session: a protected one (top-left), a foreign /usr/bin/sleep and a
// foreign /usr/bin/tail.
type scene struct {
	h     *testHost
	desk  *fakeDesktop
	rec   *recorder
	clock *fakeClock

	protPID, foreignPID, tailPID int
	protWin, foreignWin, tailWin uint32
}

type sceneOptions struct {
	consent consentFunc
	policy  *cuav1.PolicySnapshot
}

func newScene(t testing.TB, o sceneOptions) *scene {
	t.Helper()
	sc := &scene{desk: &fakeDesktop{}, clock: newFakeClock()}
	sc.rec = &recorder{desk: sc.desk, runs: map[string]int{}, args: map[string]json.RawMessage{}}
	t.Cleanup(sc.rec.stop)
	sc.protPID = spawn(t, "/usr/bin/sleep", "300")
	sc.foreignPID = spawn(t, "/usr/bin/sleep", "300")
	sc.tailPID = spawn(t, "/usr/bin/tail", "-f", "/dev/null")
	sc.tailWin = sc.desk.add(sc.tailPID, x11.Rect{X: 600, Y: 40, Width: 200, Height: 200}, "tail")
	sc.foreignWin = sc.desk.add(sc.foreignPID, x11.Rect{X: 300, Y: 40, Width: 200, Height: 200}, "foreign")
	sc.protWin = sc.desk.add(sc.protPID, x11.Rect{X: 0, Y: 40, Width: 200, Height: 200}, "consent UI")
	sc.h = startTestWorker(t, testWorkerOptions{
		register: sc.rec.register, desk: sc.desk, protectedPIDs: []int{sc.protPID},
		consent: o.consent, now: sc.clock.now, policy: o.policy,
	})
	return sc
}

// launch runs the fake launch_app in session c and returns the new process and window.
func (sc *scene) launch(t testing.TB, c *client.Conn) (int, uint32) {
	t.Helper()
	res := call(t, c, "launch_app", map[string]any{"name": "sleep"})
	if res.Outcome != client.Completed || res.IsError {
		t.Fatalf("launch_app = %+v %s", res, res.Text())
	}
	var out struct {
		PID      int    `json:"pid"`
		WindowID uint32 `json:"window_id"`
	}
	if err := json.Unmarshal(res.Structured, &out); err != nil {
		t.Fatal(err)
	}
	return out.PID, out.WindowID
}

func win(pid int, id uint32) map[string]any {
	return map[string]any{"pid": pid, "window_id": id, "x": 10, "y": 10}
}

const sleepManifest = `version: 1
expires_after: 1h
idle_timeout: 30m
allow: {tools: [launch_app, click, zoom, kill_app, get_screen_size, noop]}
deny: {tools: [type_text]}
resources:
  apps: [{executable: /usr/bin/sleep, launch: true, terminate: driver_launched, arguments: ['[0-9]+']}]
`

// grantForLabel grants consent to sessions whose label starts with "grant", for a minute.
func grantForLabel(req *cuav1.ConsentRequest) (bool, uint32, bool) {
	return strings.HasPrefix(req.GetLabel(), "grant"), 60, false
}

func TestModeOwnershipMatrixInProcess(t *testing.T) {
	sc := newScene(t, sceneOptions{consent: grantForLabel})
	type session struct {
		label string
		mode  authz.Mode
		man   string
	}
	sessions := []session{
		{"grant-std", authz.Standard, ""},
		{"decline-std", authz.Standard, ""},
		{"bounded", authz.Bounded, sleepManifest},
		{"unrestricted", authz.Unrestricted, ""},
	}
	// Expected code per session for: own window, foreign sleep, foreign tail, protected.
	want := map[string][4]authz.Code{
		"grant-std":    {"", "", "", authz.CodeSelfTargetDenied},
		"decline-std":  {"", authz.CodeAuthorizationDeclined, authz.CodeAuthorizationDeclined, authz.CodeSelfTargetDenied},
		"bounded":      {"", "", authz.CodeOutsideManifest, authz.CodeSelfTargetDenied},
		"unrestricted": {"", "", "", authz.CodeSelfTargetDenied},
	}
	for _, s := range sessions {
		t.Run(s.label, func(t *testing.T) {
			c := sc.h.mustSession(s.label, s.mode, s.man)
			ownPID, ownWin := sc.launch(t, c)
			targets := []map[string]any{win(ownPID, ownWin), win(sc.foreignPID, sc.foreignWin), win(sc.tailPID, sc.tailWin), win(sc.protPID, sc.protWin)}
			ran := 0
			for i, args := range targets {
				res := call(t, c, "click", args)
				expect(t, res, want[s.label][i])
				if want[s.label][i] == "" {
					ran++
				}
			}
			if got := sc.rec.ran(s.label, "click"); got != ran {
				t.Errorf("click ran %d times, want %d (refused calls must not run)", got, ran)
			}
		})
	}
}

func TestConsentGrantScopeAndReuse(t *testing.T) {
	var mu sync.Mutex
	var ttl uint32 = 60
	sc := newScene(t, sceneOptions{consent: func(req *cuav1.ConsentRequest) (bool, uint32, bool) {
		mu.Lock()
		defer mu.Unlock()
		return true, ttl, false
	}})
	c := sc.h.mustSession("s", authz.Standard, "")
	foreign := win(sc.foreignPID, sc.foreignWin)

	expect(t, call(t, c, "click", foreign), "")
	expect(t, call(t, c, "click", foreign), "")
	if n := sc.h.consentAsked.Load(); n != 1 {
		t.Fatalf("asked %d times for two clicks on one window, want 1 (grant reused)", n)
	}
	sc.h.mu.Lock()
	req := sc.h.requests[0]
	sc.h.mu.Unlock()
	if req.GetLabel() != "s" || req.GetTool() != "click" || req.GetOperation() != "input" ||
		req.GetResource() != fmt.Sprintf("window:pid=%d,id=0x%x", sc.foreignPID, sc.foreignWin) || !strings.Contains(req.GetDescription(), "/usr/bin/sleep") {
		t.Errorf("ConsentRequest = %v", req)
	}
	// Another operation class on the same window asks again.
	expect(t, call(t, c, "zoom", map[string]any{"pid": sc.foreignPID, "window_id": sc.foreignWin}), "")
	// Another window of another process asks again.
	expect(t, call(t, c, "click", win(sc.tailPID, sc.tailWin)), "")
	if n := sc.h.consentAsked.Load(); n != 3 {
		t.Fatalf("asked %d times, want 3 (one per resource and operation)", n)
	}
	// The display is its own resource.
	expect(t, call(t, c, "get_desktop_state", nil), "")
	expect(t, call(t, c, "get_desktop_state", nil), "")
	if n := sc.h.consentAsked.Load(); n != 4 {
		t.Fatalf("asked %d times, want 4", n)
	}
	// An expired grant asks again.
	sc.clock.advance(61 * time.Second)
	expect(t, call(t, c, "click", foreign), "")
	if n := sc.h.consentAsked.Load(); n != 5 {
		t.Fatalf("asked %d times after expiry, want 5", n)
	}
	// A one-call grant (TTL 0) is not reused.
	mu.Lock()
	ttl = 0
	mu.Unlock()
	expect(t, call(t, c, "clipboard_read", nil), "")
	expect(t, call(t, c, "clipboard_read", nil), "")
	if n := sc.h.consentAsked.Load(); n != 7 {
		t.Fatalf("asked %d times, want 7 (TTL 0 grants one call)", n)
	}
	// Writing the clipboard and launching need no consent.
	expect(t, call(t, c, "clipboard_write", map[string]any{"text": "x"}), "")
	if n := sc.h.consentAsked.Load(); n != 7 {
		t.Fatalf("clipboard_write asked for consent")
	}
	// A grant belongs to its session: another session asks for itself.
	c2 := sc.h.mustSession("s2", authz.Standard, "")
	mu.Lock()
	ttl = 60
	mu.Unlock()
	expect(t, call(t, c2, "click", foreign), "")
	if n := sc.h.consentAsked.Load(); n != 8 {
		t.Fatalf("second session reused the first one's grant")
	}
}

func TestConsentDeclinedAndUnavailable(t *testing.T) {
	sc := newScene(t, sceneOptions{consent: func(req *cuav1.ConsentRequest) (bool, uint32, bool) {
		if req.GetLabel() == "nobody" {
			return false, 0, true
		}
		return false, 60, false
	}})
	declined := sc.h.mustSession("declined", authz.Standard, "")
	nobody := sc.h.mustSession("nobody", authz.Standard, "")
	expect(t, call(t, declined, "click", win(sc.foreignPID, sc.foreignWin)), authz.CodeAuthorizationDeclined)
	expect(t, call(t, nobody, "click", win(sc.foreignPID, sc.foreignWin)), authz.CodeAuthorizationRequired)
	expect(t, call(t, nobody, "kill_app", map[string]any{"pid": sc.foreignPID}), authz.CodeAuthorizationRequired)
	if sc.rec.ran("declined", "click")+sc.rec.ran("nobody", "click")+sc.rec.ran("nobody", "kill_app") != 0 {
		t.Error("a refused call ran")
	}
	// A declined request is asked again next time (declines are not remembered as grants).
	expect(t, call(t, declined, "click", win(sc.foreignPID, sc.foreignWin)), authz.CodeAuthorizationDeclined)
	if n := sc.h.consentAsked.Load(); n != 4 {
		t.Errorf("asked %d times, want 4", n)
	}
}

func TestConsentConcurrentCallsAskOnce(t *testing.T) {
	release := make(chan struct{})
	sc := newScene(t, sceneOptions{consent: func(req *cuav1.ConsentRequest) (bool, uint32, bool) {
		<-release
		return true, 60, false
	}})
	c := sc.h.mustSession("s", authz.Standard, "")
	var wg sync.WaitGroup
	results := make([]client.Result, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = call(t, c, "click", win(sc.foreignPID, sc.foreignWin))
		}()
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	for _, res := range results {
		expect(t, res, "")
	}
	if n := sc.h.consentAsked.Load(); n != 1 {
		t.Errorf("8 concurrent calls asked %d times, want 1", n)
	}
}

func TestAdversarialArguments(t *testing.T) {
	sc := newScene(t, sceneOptions{consent: grantForLabel})
	std := sc.h.mustSession("std", authz.Standard, "")
	_ = sc.h.mustSession("grant-unres", authz.Unrestricted, "")
	bounded := sc.h.mustSession("bounded", authz.Bounded, sleepManifest)
	ownPID, ownWin := sc.launch(t, std)
	forged := map[string]any{
		"mode": "unrestricted", "_mode": "unrestricted",
		"session": "grant-unres", "_session": "grant-unres", "label": "grant-unres", "_label": "grant-unres",
		"_authorization": "granted", "__proto__": map[string]any{"mode": "unrestricted"}, "_": "x",
		"generation": "00", "_consent": true, "dangerously_bypass_approvals": true, "_meta": map[string]any{"mode": "unrestricted"},
	}
	withForged := func(base map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range forged {
			out[k] = v
		}
		for k, v := range base {
			out[k] = v
		}
		return out
	}
	tests := []struct {
		name string
		c    *client.Conn
		tool string
		args any
		want authz.Code
	}{
		{name: "forged mode on a foreign window", c: std, tool: "click", args: withForged(win(sc.foreignPID, sc.foreignWin)), want: authz.CodeAuthorizationDeclined},
		{name: "forged keys in bounded", c: bounded, tool: "get_desktop_state", args: withForged(nil), want: authz.CodeOutsideManifest},
		{name: "manifest-denied tool with forged keys", c: bounded, tool: "type_text", args: withForged(map[string]any{"text": "x"}), want: authz.CodeManifestDenied},
		{name: "alias of a denied tool", c: bounded, tool: "type_text_chars", args: map[string]any{"text": "x"}, want: authz.CodeManifestDenied},
		{name: "pid as a string", c: std, tool: "click", args: map[string]any{"pid": fmt.Sprint(sc.foreignPID), "window_id": sc.foreignWin, "x": 1, "y": 1}, want: authz.CodeInvalidArguments},
		{name: "fractional pid", c: std, tool: "click", args: map[string]any{"pid": 1.5, "window_id": sc.foreignWin, "x": 1, "y": 1}, want: authz.CodeInvalidArguments},
		{name: "negative window", c: std, tool: "click", args: map[string]any{"pid": ownPID, "window_id": -1, "x": 1, "y": 1}, want: authz.CodeInvalidArguments},
		{name: "own pid with a foreign window", c: std, tool: "click", args: win(ownPID, sc.foreignWin), want: authz.CodeWindowNotFound},
		{name: "own pid with the protected window", c: std, tool: "click", args: win(ownPID, sc.protWin), want: authz.CodeSelfTargetDenied},
		{name: "target object naming the protected window", c: std, tool: "click", args: map[string]any{"target": map[string]any{"kind": "window", "pid": sc.protPID, "window_id": sc.protWin}, "x": 1, "y": 1}, want: authz.CodeSelfTargetDenied},
		{name: "target object with a window the pid does not own", c: std, tool: "click", args: map[string]any{"target": map[string]any{"kind": "window", "pid": ownPID, "window_id": sc.foreignWin}, "x": 1, "y": 1}, want: authz.CodeWindowNotFound},
		{name: "target object contradicting pid", c: std, tool: "click", args: map[string]any{"target": map[string]any{"kind": "window", "pid": ownPID, "window_id": ownWin}, "pid": sc.protPID, "x": 1, "y": 1}, want: authz.CodeInvalidArguments},
		{name: "target object with a fractional pid", c: std, tool: "click", args: map[string]any{"target": map[string]any{"kind": "window", "pid": 1.5, "window_id": ownWin}, "x": 1, "y": 1}, want: authz.CodeInvalidArguments},
		{name: "target display other than primary", c: std, tool: "click", args: map[string]any{"target": map[string]any{"kind": "desktop", "display_id": "secondary"}, "x": 1, "y": 1}, want: authz.CodeUnsupported},
		{name: "target of an unknown kind", c: std, tool: "click", args: map[string]any{"target": map[string]any{"kind": "screen"}, "x": 1, "y": 1}, want: authz.CodeInvalidArguments},
		{name: "the worker itself", c: std, tool: "kill_app", args: map[string]any{"pid": selfPIDForTest()}, want: authz.CodeSelfTargetDenied},
		{name: "the protected pid by pid only", c: std, tool: "kill_app", args: map[string]any{"pid": sc.protPID}, want: authz.CodeSelfTargetDenied},
		{name: "unclassified tool with a protected pid", c: std, tool: "frobnicate", args: map[string]any{"pid": sc.protPID}, want: authz.CodeSelfTargetDenied},
		{name: "unclassified tool", c: std, tool: "frobnicate", args: nil, want: authz.CodeUnclassifiedTool},
		{name: "not exposed tool", c: std, tool: "run_shell", args: nil, want: authz.CodeUnsupported},
		{name: "arguments not an object", c: std, tool: "noop", args: []int{1}, want: authz.CodeInvalidArguments},
		{name: "case-folded pid", c: std, tool: "kill_app", args: map[string]any{"PID": sc.protPID}, want: authz.CodeInvalidArguments},
		{name: "long-s scope", c: std, tool: "click", args: map[string]any{"ſcope": "desktop", "x": 5, "y": 5}, want: authz.CodeInvalidArguments},
		{name: "case-folded window_id next to the real one", c: std, tool: "click", args: map[string]any{"pid": ownPID, "window_id": ownWin, "x": 1, "y": 1, "Window_Id": sc.foreignWin}, want: authz.CodeInvalidArguments},
		{name: "desktop coordinates without scope", c: std, tool: "click", args: map[string]any{"x": 5, "y": 5}, want: authz.CodeDesktopCoordinateScopeRequired},
		{name: "capitalised look-alike key", c: bounded, tool: "get_desktop_state", args: map[string]any{"Mode": "unrestricted"}, want: authz.CodeInvalidArguments},
		{name: "Cyrillic look-alike key", c: std, tool: "click", args: withForged(map[string]any{"mоde": "unrestricted"}), want: authz.CodeInvalidArguments},
		{name: "Kelvin-sign key folding onto a field", c: std, tool: "noop", args: map[string]any{"\u212aey": 1}, want: authz.CodeInvalidArguments},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, call(t, tt.c, tt.tool, tt.args), tt.want)
		})
	}
	for _, label := range []string{"std", "bounded", "grant-unres"} {
		for _, name := range []string{"click", "get_desktop_state", "type_text", "kill_app"} {
			if n := sc.rec.ran(label, name); n != 0 {
				t.Errorf("%s/%s ran %d times", label, name, n)
			}
		}
	}
	// The forged keys never reach a handler: underscore keys are dropped for allowed calls.
	expect(t, call(t, std, "click", map[string]any{"pid": ownPID, "window_id": ownWin, "x": 1, "y": 1, "_mode": "unrestricted"}), "")
	if a := string(sc.rec.lastArgs("std", "click")); strings.Contains(a, "_mode") {
		t.Errorf("handler saw %s", a)
	}
}

func selfPIDForTest() int { return selfPIDValue() }

func TestPinningAndProtectedUI(t *testing.T) {
	sc := newScene(t, sceneOptions{consent: grantForLabel})
	c := sc.h.mustSession("grant", authz.Unrestricted, "")
	ownPID, ownWin := sc.launch(t, c)

	// Keyboard input without a target goes to the focused window, pinned.
	sc.desk.focus(ownWin)
	expect(t, call(t, c, "type_text", map[string]any{"text": "hi"}), "")
	var got map[string]any
	json.Unmarshal(sc.rec.lastArgs("grant", "type_text"), &got)
	if got["pid"] != float64(ownPID) || got["window_id"] != float64(ownWin) {
		t.Errorf("type_text args = %v, want pinned to pid %d window %d", got, ownPID, ownWin)
	}
	// ... and never to a focused protected window, even unrestricted.
	sc.desk.focus(sc.protWin)
	expect(t, call(t, c, "type_text", map[string]any{"text": "hi"}), authz.CodeProtectedUIDenied)

	// Desktop coordinates landing on the protected window (or its title bar).
	for _, p := range [][2]int{{50, 100}, {50, 20}, {205, 100}} {
		expect(t, call(t, c, "click", map[string]any{"scope": "desktop", "x": p[0], "y": p[1]}), authz.CodeProtectedUIDenied)
	}
	expect(t, call(t, c, "click", map[string]any{"scope": "desktop", "x": 350, "y": 100}), "")
	// A drag that ends on it.
	expect(t, call(t, c, "drag", map[string]any{"scope": "desktop", "from_x": 350, "from_y": 100, "to_x": 50, "to_y": 100}), authz.CodeProtectedUIDenied)
	// Window-relative coordinates of an own window that fall on the protected one.
	sc.desk.mu.Lock()
	for i := range sc.desk.wins {
		if sc.desk.wins[i].ID == ownWin { // move it under the protected window
			sc.desk.wins[i].Frame = x11.Rect{X: 100, Y: 100, Width: 300, Height: 300}
			w := sc.desk.wins[i]
			sc.desk.wins = append(sc.desk.wins[:i], sc.desk.wins[i+1:]...)
			sc.desk.wins = append(sc.desk.wins, w)
			break
		}
	}
	sc.desk.mu.Unlock()
	expect(t, call(t, c, "click", map[string]any{"pid": ownPID, "window_id": ownWin, "x": 10, "y": 10}), authz.CodeProtectedUIDenied)
	expect(t, call(t, c, "click", map[string]any{"pid": ownPID, "window_id": ownWin, "x": 250, "y": 250}), "")
	// A button release without coordinates happens where the pointer is.
	sc.desk.mu.Lock()
	sc.desk.pointer = x11.Point{X: 20, Y: 60}
	sc.desk.mu.Unlock()
	expect(t, call(t, c, "mouse_button_up", map[string]any{}), authz.CodeProtectedUIDenied)
	if n := sc.rec.ran("grant", "drag") + sc.rec.ran("grant", "mouse_button_up"); n != 0 {
		t.Errorf("refused pointer calls ran %d times", n)
	}
}

func TestSessionLifetimes(t *testing.T) {
	sc := newScene(t, sceneOptions{consent: grantForLabel})
	short, e := sc.h.session("short", authz.Standard, "", 10, 3)
	if e != nil {
		t.Fatal(e)
	}
	idle, e := sc.h.session("idle", authz.Standard, "", 10, 3)
	if e != nil {
		t.Fatal(e)
	}
	expect(t, call(t, short, "noop", nil), "")
	expect(t, call(t, idle, "noop", nil), "")
	sc.clock.advance(2 * time.Second)
	expect(t, call(t, short, "noop", nil), "")
	sc.clock.advance(2 * time.Second) // idle: 4 s since its last call
	expect(t, call(t, idle, "noop", nil), authz.CodeAuthorizationExpired)
	expect(t, call(t, idle, "noop", nil), authz.CodeAuthorizationExpired) // terminal
	expect(t, call(t, short, "noop", nil), "")
	sc.clock.advance(7 * time.Second) // 11 s: past the lifetime
	expect(t, call(t, short, "noop", nil), authz.CodeSessionEnded)
	if n := sc.rec.ran("short", "noop"); n != 3 {
		t.Errorf("noop ran %d times, want 3", n)
	}
	// The manifest's lifetimes shorten the session's.
	man := strings.Replace(sleepManifest, "expires_after: 1h", "expires_after: 5s", 1)
	man = strings.Replace(man, "idle_timeout: 30m", "idle_timeout: 2s", 1)
	b, e := sc.h.session("bounded", authz.Bounded, man, 3600, 3600)
	if e != nil {
		t.Fatal(e.GetMessage())
	}
	expect(t, call(t, b, "noop", nil), "")
	sc.clock.advance(3 * time.Second)
	expect(t, call(t, b, "noop", nil), authz.CodeAuthorizationExpired)
}

func TestEndSession(t *testing.T) {
	sc := newScene(t, sceneOptions{consent: grantForLabel})
	c := sc.h.mustSession("grant", authz.Standard, "")
	expect(t, call(t, c, "click", win(sc.foreignPID, sc.foreignWin)), "")
	res := call(t, c, "get_session", nil)
	var info map[string]any
	json.Unmarshal(res.Structured, &info)
	if info["mode"] != "standard" || info["consent_grants"] != float64(1) {
		t.Errorf("get_session = %s", res.Structured)
	}
	expect(t, call(t, c, "end_session", nil), "")
	expect(t, call(t, c, "click", win(sc.foreignPID, sc.foreignWin)), authz.CodeSessionEnded)
	expect(t, call(t, c, "noop", nil), authz.CodeSessionEnded)
	if n := sc.rec.ran("grant", "click"); n != 1 {
		t.Errorf("click ran %d times after end_session", n)
	}
}

func TestCreateSessionRefusals(t *testing.T) {
	sc := newScene(t, sceneOptions{})
	tests := []struct {
		name  string
		build func() *cuav1.CreateSession
		code  string
		msg   string
	}{
		{name: "malformed manifest", build: func() *cuav1.CreateSession {
			m := "version: 1\nexpires_after: 1h\nidle_timeout: 1m\nallow: {tools: [clik]}\n"
			return &cuav1.CreateSession{Label: "a", Mode: cuav1.Mode_MODE_BOUNDED, Manifest: []byte(m), ManifestSha256: sha256Hex([]byte(m)), TtlSeconds: 60, IdleTtlSeconds: 60}
		}, code: "invalid_request", msg: `allow.tools[0]: unknown tool "clik"`},
		{name: "manifest hash mismatch", build: func() *cuav1.CreateSession {
			return &cuav1.CreateSession{Label: "a", Mode: cuav1.Mode_MODE_BOUNDED, Manifest: []byte(sleepManifest), ManifestSha256: sha256Hex([]byte("other")), TtlSeconds: 60, IdleTtlSeconds: 60}
		}, code: "invalid_request", msg: "hash mismatch"},
		{name: "bounded without manifest", build: func() *cuav1.CreateSession {
			return &cuav1.CreateSession{Label: "a", Mode: cuav1.Mode_MODE_BOUNDED, TtlSeconds: 60, IdleTtlSeconds: 60}
		}, code: "invalid_request", msg: "needs a manifest"},
		{name: "unspecified mode", build: func() *cuav1.CreateSession {
			return &cuav1.CreateSession{Label: "a", TtlSeconds: 60, IdleTtlSeconds: 60}
		}, code: "invalid_request", msg: "invalid mode"},
		{name: "ttl over the ceiling", build: func() *cuav1.CreateSession {
			return &cuav1.CreateSession{Label: "a", Mode: cuav1.Mode_MODE_STANDARD, TtlSeconds: 25 * 3600, IdleTtlSeconds: 60}
		}, code: "permission_denied", msg: "exceeds the ceiling"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mine, theirs, _ := wire.SessionPair()
			defer mine.Close()
			reply := sc.h.request(&cuav1.ControlFrame{Body: &cuav1.ControlFrame_CreateSession{CreateSession: tt.build()}}, theirs)
			theirs.Close()
			e := reply.GetError()
			if e == nil || e.GetCode() != tt.code || !strings.Contains(e.GetMessage(), tt.msg) {
				t.Errorf("CreateSession = %v, want %s containing %q", reply, tt.code, tt.msg)
			}
		})
	}
}

// TestReplayAndRevocation drives a session channel by hand: a repeated request id is
// refused, and after revocation nothing runs.
func TestReplayAndRevocation(t *testing.T) {
	sc := newScene(t, sceneOptions{})
	mine, theirs, _ := wire.SessionPair()
	reply := sc.h.request(&cuav1.ControlFrame{Body: &cuav1.ControlFrame_CreateSession{CreateSession: &cuav1.CreateSession{
		Label: "raw", Mode: cuav1.Mode_MODE_UNRESTRICTED, TtlSeconds: 60, IdleTtlSeconds: 60}}}, theirs)
	theirs.Close()
	if reply.GetSessionCreated() == nil {
		t.Fatalf("CreateSession: %v", reply)
	}
	conn, err := wire.NewSessionConn(mine)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	send := func(id uint64, name string, gen []byte) *cuav1.ToolResult {
		t.Helper()
		if err := conn.Send(&cuav1.Envelope{ProtocolVersion: 1, RequestId: id, Generation: gen, Body: &cuav1.Envelope_CallTool{CallTool: &cuav1.CallTool{Name: name}}}); err != nil {
			t.Fatal(err)
		}
		env, err := conn.Recv()
		if err != nil {
			t.Fatal(err)
		}
		return env.GetToolResult()
	}
	if r := send(5, "noop", sc.h.gen); r.GetOutcome() != cuav1.Outcome_OUTCOME_COMPLETED {
		t.Fatalf("first call = %v", r)
	}
	for _, id := range []uint64{5, 4} {
		if r := send(id, "noop", sc.h.gen); r.GetOutcome() != cuav1.Outcome_OUTCOME_NOT_STARTED || r.GetRefusal().GetCode() != "replayed_request" {
			t.Errorf("request id %d again = %v, want replayed_request", id, r)
		}
	}
	if r := send(6, "noop", make([]byte, contract.GenerationLen)); r.GetRefusal().GetCode() != "generation_mismatch" {
		t.Errorf("wrong generation = %v", r)
	}
	sc.h.revoke("raw")
	if r := send(7, "noop", sc.h.gen); r.GetOutcome() != cuav1.Outcome_OUTCOME_NOT_STARTED || r.GetRefusal().GetCode() != "authorization_revoked" {
		t.Errorf("after revocation = %v", r)
	}
	if n := sc.rec.ran("raw", "noop"); n != 1 {
		t.Errorf("noop ran %d times, want 1", n)
	}
}

func TestListToolsFollowsModeAndInventory(t *testing.T) {
	sc := newScene(t, sceneOptions{})
	extra := func(reg *tool.Registry) {}
	_ = extra
	names := func(c *client.Conn) string {
		tools, err := c.ListTools(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ti := range tools {
			out = append(out, ti.Name)
		}
		return strings.Join(out, ",")
	}
	b := sc.h.mustSession("b", authz.Bounded, sleepManifest)
	if got := names(b); got != "click,zoom,kill_app,get_screen_size,noop,launch_app" {
		t.Errorf("bounded tools/list = %s", got)
	}
	u := sc.h.mustSession("u", authz.Unrestricted, "")
	all := names(u)
	for _, want := range []string{"click", "type_text", "health_report", "get_session", "end_session", "launch_app"} {
		if !strings.Contains(","+all+",", ","+want+",") {
			t.Errorf("unrestricted tools/list %s lacks %s", all, want)
		}
	}
}

func TestUnclassifiedRegisteredToolIsRefused(t *testing.T) {
	ran := 0
	h := startTestWorker(t, testWorkerOptions{register: func(reg *tool.Registry) {
		reg.Register(tool.Tool{Name: "secret_tool", Handler: func(context.Context, *tool.Call) (*tool.Result, error) {
			ran++
			return &tool.Result{}, nil
		}})
	}})
	c := h.mustSession("u", authz.Unrestricted, "")
	expect(t, call(t, c, "secret_tool", nil), authz.CodeUnclassifiedTool)
	tools, _ := c.ListTools(context.Background())
	for _, ti := range tools {
		if ti.Name == "secret_tool" {
			t.Error("an unclassified tool is listed")
		}
	}
	// Without a desktop, window targets are refused rather than decided on the pid alone.
	h2 := startTestWorker(t, testWorkerOptions{register: (&recorder{runs: map[string]int{}, args: map[string]json.RawMessage{}}).register})
	c2 := h2.mustSession("u", authz.Unrestricted, "")
	expect(t, call(t, c2, "click", map[string]any{"pid": 1, "window_id": 2, "x": 1, "y": 1}), authz.CodeUnsupported)
	if ran != 0 {
		t.Error("secret_tool ran")
	}
}

// TestClientSetPIDIsNotOwnership: a window whose pid is only the client-set _NET_WM_PID is
// nobody's own, even when that pid is the session's launched process.
func TestClientSetPIDIsNotOwnership(t *testing.T) {
	sc := newScene(t, sceneOptions{})
	c := sc.h.mustSession("std", authz.Standard, "")
	ownPID, _ := sc.launch(t, c)
	spoof := sc.desk.add(ownPID, x11.Rect{X: 900, Y: 300, Width: 100, Height: 100}, "spoofed")
	sc.desk.mu.Lock()
	sc.desk.wins[0].PIDSource = x11.PIDFromNetWMPID
	sc.desk.mu.Unlock()
	expect(t, call(t, c, "click", win(ownPID, spoof)), authz.CodeAuthorizationRequired)
	b := sc.h.mustSession("bounded", authz.Bounded, sleepManifest)
	expect(t, call(t, b, "click", win(ownPID, spoof)), authz.CodeOutsideManifest)
}

// TestAnAliasIsNeverListed: a tool registered under an alias (type_text_chars) has no
// inventory entry, so tools/list never names it — the MCP proxy keeps no list of
// aliases to hide — and a call of the alias runs the canonical tool.
func TestAnAliasIsNeverListed(t *testing.T) {
	ran := map[string]int{}
	h := startTestWorker(t, testWorkerOptions{register: func(reg *tool.Registry) {
		for _, name := range []string{"type_text", "type_text_chars"} {
			reg.Register(tool.Tool{Name: name, Handler: func(context.Context, *tool.Call) (*tool.Result, error) {
				ran[name]++
				return &tool.Result{}, nil
			}})
		}
	}})
	c := h.mustSession("u", authz.Unrestricted, "")
	tools, err := c.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range tools {
		if policy.CanonicalTool(ti.Name) != ti.Name {
			t.Errorf("tools/list names the alias %s", ti.Name)
		}
	}
	call(t, c, "type_text_chars", map[string]any{"scope": "desktop", "text": "x"})
	if ran["type_text_chars"] != 0 {
		t.Errorf("a call of the alias ran the tool registered under it %d times; the worker must canonicalise the name", ran["type_text_chars"])
	}
}
