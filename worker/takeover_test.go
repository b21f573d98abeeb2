package worker

import (
	"testing"

	"github.com/cua-host/cua-host/authz"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// personActivity sends the host's PersonActivity frame (no reply) and waits until the
// worker has read it: a StatusRequest sent after it is answered after it.
func (h *testHost) personActivity(active bool) {
	h.t.Helper()
	if err := h.hc.Send(&cuav1.ControlFrame{ProtocolVersion: 1, Body: &cuav1.ControlFrame_PersonActivity{PersonActivity: &cuav1.PersonActivity{Active: active}}}, nil); err != nil {
		h.t.Fatalf("send PersonActivity: %v", err)
	}
	h.status()
}

// TestPersonActiveRefusesActingCalls: while the host says the person is using the
// display, every call that acts on it (input, clipboard writes, launches, terminations) is
// refused person_active before it runs, observing calls run, and the next call after the
// person left runs again.
func TestPersonActiveRefusesActingCalls(t *testing.T) {
	sc := newScene(t, sceneOptions{})
	c := sc.h.mustSession("agent", authz.Unrestricted, "")
	ownPID, ownWin := sc.launch(t, c)
	sc.h.personActivity(true)
	tests := []struct {
		name string
		tool string
		args map[string]any
		want authz.Code
	}{
		{name: "click", tool: "click", args: win(ownPID, ownWin), want: authz.CodePersonActive},
		{name: "type_text", tool: "type_text", args: map[string]any{"pid": ownPID, "window_id": ownWin, "text": "x"}, want: authz.CodePersonActive},
		{name: "scroll", tool: "scroll", args: win(ownPID, ownWin), want: authz.CodePersonActive},
		{name: "clipboard_write", tool: "clipboard_write", args: map[string]any{"text": "x"}, want: authz.CodePersonActive},
		{name: "launch_app", tool: "launch_app", args: map[string]any{"name": "sleep"}, want: authz.CodePersonActive},
		{name: "kill_app", tool: "kill_app", args: map[string]any{"pid": ownPID}, want: authz.CodePersonActive},
		{name: "zoom observes", tool: "zoom", args: map[string]any{"pid": ownPID, "window_id": ownWin, "x": 0, "y": 0, "width": 10, "height": 10}},
		{name: "list_windows observes", tool: "list_windows"},
		{name: "get_screen_size observes", tool: "get_screen_size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := sc.rec.ran("agent", tt.tool)
			expect(t, call(t, c, tt.tool, tt.args), tt.want)
			ran := sc.rec.ran("agent", tt.tool) - before
			if want := map[bool]int{true: 0, false: 1}[tt.want != ""]; ran != want {
				t.Errorf("%s ran %d times while the person is active, want %d", tt.tool, ran, want)
			}
		})
	}
	sc.h.personActivity(false)
	expect(t, call(t, c, "click", win(ownPID, ownWin)), "")
	if got := sc.rec.ran("agent", "click"); got != 1 {
		t.Errorf("click ran %d times after the person left, want 1", got)
	}
	// Repeated frames change nothing; the state is the latest one.
	sc.h.personActivity(true)
	sc.h.personActivity(true)
	expect(t, call(t, c, "click", win(ownPID, ownWin)), authz.CodePersonActive)
	sc.h.personActivity(false)
	expect(t, call(t, c, "click", win(ownPID, ownWin)), "")
	if got := sc.rec.ran("agent", "click"); got != 2 {
		t.Errorf("click ran %d times in all, want 2", got)
	}
}
