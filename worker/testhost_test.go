package worker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/client"
	"github.com/cua-host/cua-host/proto/contract"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// fakeDesktop is a Desktop whose windows a test sets; it is also the registry's closer.
type fakeDesktop struct {
	// mu guards the fields below.
	mu      sync.Mutex
	wins    []x11.Window // top-most first
	pointer x11.Point
	nextID  uint32
}

func (d *fakeDesktop) Close() error { return nil }

func (d *fakeDesktop) Windows(ctx context.Context) ([]x11.Window, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]x11.Window(nil), d.wins...), nil
}

func (d *fakeDesktop) Window(ctx context.Context, id uint32) (x11.Window, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, w := range d.wins {
		if w.ID == id {
			return w, nil
		}
	}
	return x11.Window{}, fmt.Errorf("%w: 0x%x", x11.ErrWindowNotFound, id)
}

func (d *fakeDesktop) Pointer(ctx context.Context) (x11.Point, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pointer, nil
}

// add maps a window of pid at frame f on top and returns its id.
func (d *fakeDesktop) add(pid int, f x11.Rect, title string) uint32 {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextID++
	id := 0x400000 + d.nextID
	w := x11.Window{ID: id, PID: pid, PIDSource: x11.PIDFromXRes, Title: title, Frame: f, Mapped: true}
	d.wins = append([]x11.Window{w}, d.wins...)
	return id
}

// focus gives the focus to window id (0: none).
func (d *fakeDesktop) focus(id uint32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range d.wins {
		d.wins[i].Focused = d.wins[i].ID == id
	}
}

// spawn starts a long-sleeping child process running exe and stops it at cleanup.
func spawn(t testing.TB, exe string, args ...string) int {
	t.Helper()
	cmd := exec.Command(exe, args...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", exe, err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// recorder is a set of fake desktop tools that record the calls they ran.
type recorder struct {
	desk *fakeDesktop
	// mu guards the fields below.
	mu   sync.Mutex
	runs map[string]int // "label/tool" → calls that ran
	args map[string]json.RawMessage
	// launched are the processes fake launch_app started (killed at cleanup).
	launched []*exec.Cmd
}

func (r *recorder) ran(label, toolName string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[label+"/"+toolName]
}

func (r *recorder) lastArgs(label, toolName string) json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.args[label+"/"+toolName]
}

var windowSchema = json.RawMessage(`{"type":"object","properties":{"pid":{"type":"integer"},"window_id":{"type":"integer"},"x":{},"y":{},"scope":{},"text":{},"session":{}}}`)

// register adds recording tools named like the real ones, so the shipped inventory
// classifies them, plus launch_app, which starts /usr/bin/sleep and maps a window for it.
func (r *recorder) register(reg *tool.Registry) {
	record := func(name string) tool.Handler {
		return func(ctx context.Context, call *tool.Call) (*tool.Result, error) {
			r.mu.Lock()
			r.runs[call.Session.Label+"/"+name]++
			raw, _ := call.RawArgs()
			r.args[call.Session.Label+"/"+name] = append(json.RawMessage(nil), raw...)
			r.mu.Unlock()
			return tool.TextResult("ran "+name, nil), nil
		}
	}
	for _, name := range []string{"click", "zoom", "type_text", "kill_app", "get_desktop_state", "clipboard_read", "clipboard_write", "get_screen_size", "list_windows", "scroll", "drag", "mouse_button_up"} {
		args, touches := shippedTouches(name)
		reg.Register(tool.Tool{Name: name, InputSchema: windowSchema, Args: args, Touches: pinning(touches), Handler: record(name)})
	}
	reg.Register(tool.Tool{Name: "noop", Quick: true, Handler: record("noop")})
	launchArgs, launchTouches := shippedTouches("launch_app")
	reg.Register(tool.Tool{Name: "launch_app", Args: launchArgs, Touches: launchTouches, Handler: func(ctx context.Context, call *tool.Call) (*tool.Result, error) {
		cmd := exec.Command("/usr/bin/sleep", "300")
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		pid := cmd.Process.Pid
		call.Session.RecordLaunch(pid)
		id := r.desk.add(pid, x11.Rect{X: 900, Y: 600, Width: 100, Height: 100}, "own")
		r.mu.Lock()
		r.launched = append(r.launched, cmd)
		r.runs[call.Session.Label+"/launch_app"]++
		r.mu.Unlock()
		return tool.TextResult("launched", map[string]any{"pid": pid, "window_id": id}), nil
	}})
}

// shippedTouches is what the shipped tool name declares it touches (tool.Tool.Touches),
// for a test tool standing in for it, with the argument struct those facts read when
// they read one (Touches.Pastes, Touches.Launch; else nil, and the test tool decodes
// nothing).
func shippedTouches(name string) (args func() any, touches tool.Touches) {
	for _, tl := range Catalog() {
		if tl.Name == name {
			if tl.Touches.Pastes != nil || tl.Touches.Launch != nil {
				args = tl.Args
			}
			return args, tl.Touches
		}
	}
	return nil, tool.Touches{}
}

// touchesOf is what the shipped tool name declares it touches.
func touchesOf(name string) tool.Touches {
	_, t := shippedTouches(name)
	return t
}

// pinning is t with Window set: the test tools all take pid and window_id (windowSchema).
func pinning(t tool.Touches) tool.Touches {
	t.Window = true
	return t
}

func (r *recorder) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.launched {
		c.Process.Kill()
		c.Wait()
	}
}

// consentFunc decides a worker's ConsentRequest in a test: a decision, or unavailable.
type consentFunc func(req *cuav1.ConsentRequest) (granted bool, ttlSeconds uint32, unavailable bool)

// testHost plays the host over a real control socketpair to a worker running in this
// process.
type testHost struct {
	t       testing.TB
	hc      *wire.ControlConn
	gen     []byte
	consent consentFunc
	// consentAsked counts ConsentRequests.
	consentAsked atomic.Int64
	runDone      chan error
	readerDone   chan struct{}

	// mu guards the fields below.
	mu       sync.Mutex
	nextCall uint64
	waiters  map[uint64]chan *cuav1.ControlFrame
	requests []*cuav1.ConsentRequest
}

type testWorkerOptions struct {
	register      func(*tool.Registry)
	desk          *fakeDesktop
	ceiling       authz.Ceiling
	protectedPIDs []int
	consent       consentFunc
	now           func() time.Time
	policy        *cuav1.PolicySnapshot
	extra         []authz.Entry
}

func startTestWorker(t testing.TB, o testWorkerOptions) *testHost {
	t.Helper()
	hostEnd, workerEnd, err := wire.ControlPair()
	if err != nil {
		t.Fatal(err)
	}
	hc, _ := wire.NewControlConn(hostEnd)
	wc, _ := wire.NewControlConn(workerEnd)
	if o.ceiling.AllowedModes == nil {
		o.ceiling = authz.Ceiling{AllowedModes: []authz.Mode{authz.Standard, authz.Bounded, authz.Unrestricted},
			UnrestrictedAcknowledged: true, MaxSessionTTL: 24 * time.Hour, MaxIdleTTL: time.Hour}
	}
	extra := append([]authz.Entry{authz.MetadataOnly("noop", "test", authz.R0, authz.ResourceNone, authz.Annotations{})}, o.extra...)
	cfg := Config{
		NewRegistry: func(ctx context.Context, h *cuav1.Hello, _ *slog.Logger) (*tool.Registry, io.Closer, error) {
			reg := tool.NewRegistry()
			if o.register != nil {
				o.register(reg)
			}
			if o.desk == nil {
				return reg, nil, nil
			}
			return reg, o.desk, nil
		},
		ExtraInventory: extra,
		Now:            o.now,
	}
	h := &testHost{t: t, hc: hc, gen: make([]byte, contract.GenerationLen), consent: o.consent, runDone: make(chan error, 1),
		readerDone: make(chan struct{}), waiters: map[uint64]chan *cuav1.ControlFrame{}}
	h.gen[0] = 7
	go func() { h.runDone <- Run(context.Background(), wc, cfg) }()
	hello := &cuav1.Hello{MinVersion: 1, MaxVersion: 1, Generation: h.gen, Ceiling: authz.CeilingToProto(o.ceiling), Policy: o.policy}
	for _, pid := range o.protectedPIDs {
		hello.ProtectedPids = append(hello.ProtectedPids, int32(pid))
	}
	if err := hc.Send(&cuav1.ControlFrame{ProtocolVersion: 1, Body: &cuav1.ControlFrame_Hello{Hello: hello}}, nil); err != nil {
		t.Fatal(err)
	}
	if f, _, err := hc.Recv(); err != nil || f.GetReady() == nil {
		t.Fatalf("Ready: %v %v", f, err)
	}
	go h.read()
	t.Cleanup(h.close)
	return h
}

func (h *testHost) close() {
	h.hc.Close()
	<-h.runDone
	<-h.readerDone
}

func (h *testHost) read() {
	defer close(h.readerDone)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		f, fd, err := h.hc.Recv()
		if fd != nil {
			fd.Close()
		}
		if err != nil {
			h.mu.Lock()
			for id, ch := range h.waiters {
				close(ch)
				delete(h.waiters, id)
			}
			h.mu.Unlock()
			return
		}
		if req := f.GetConsentRequest(); req != nil {
			h.consentAsked.Add(1)
			h.mu.Lock()
			h.requests = append(h.requests, req)
			h.mu.Unlock()
			wg.Add(1)
			go func(id uint64) {
				defer wg.Done()
				reply := &cuav1.ControlFrame{ProtocolVersion: 1, CallId: id}
				granted, ttl, unavailable := false, uint32(0), true
				if h.consent != nil {
					granted, ttl, unavailable = h.consent(req)
				}
				if unavailable {
					reply.Body = &cuav1.ControlFrame_Error{Error: &cuav1.ControlError{Code: "authorization_required", Message: "no provider"}}
				} else {
					reply.Body = &cuav1.ControlFrame_ConsentDecision{ConsentDecision: &cuav1.ConsentDecision{Granted: granted, TtlSeconds: ttl}}
				}
				h.hc.Send(reply, nil)
			}(f.GetCallId())
			continue
		}
		h.mu.Lock()
		ch := h.waiters[f.GetCallId()]
		delete(h.waiters, f.GetCallId())
		h.mu.Unlock()
		if ch != nil {
			ch <- f
		}
	}
}

// request sends a control request and waits for its reply.
func (h *testHost) request(f *cuav1.ControlFrame, fd *os.File) *cuav1.ControlFrame {
	h.t.Helper()
	ch := make(chan *cuav1.ControlFrame, 1)
	h.mu.Lock()
	h.nextCall++
	id := h.nextCall
	h.waiters[id] = ch
	h.mu.Unlock()
	f.ProtocolVersion, f.CallId = 1, id
	if err := h.hc.Send(f, fd); err != nil {
		h.t.Fatalf("send %v: %v", f, err)
	}
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		h.t.Fatalf("no reply to %v", f)
	}
	return nil
}

// session creates a session and returns a client, or the control error.
func (h *testHost) session(label string, mode authz.Mode, manifest string, ttl, idle uint32) (*client.Conn, *cuav1.ControlError) {
	h.t.Helper()
	if ttl == 0 {
		ttl, idle = 3600, 3600
	}
	req := &cuav1.CreateSession{Label: label, Mode: authz.ModeToProto(mode), TtlSeconds: ttl, IdleTtlSeconds: idle}
	if manifest != "" {
		req.Manifest = []byte(manifest)
		req.ManifestSha256 = sha256Hex([]byte(manifest))
	}
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

func (h *testHost) mustSession(label string, mode authz.Mode, manifest string) *client.Conn {
	h.t.Helper()
	c, e := h.session(label, mode, manifest, 0, 0)
	if e != nil {
		h.t.Fatalf("CreateSession(%s): %s: %s", label, e.GetCode(), e.GetMessage())
	}
	return c
}

func (h *testHost) revoke(label string) {
	h.t.Helper()
	if r := h.request(&cuav1.ControlFrame{Body: &cuav1.ControlFrame_RevokeSession{RevokeSession: &cuav1.RevokeSession{Label: label}}}, nil); r.GetRevoked() == nil {
		h.t.Fatalf("revoke %s: %v", label, r)
	}
}

func mustArgs(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// call runs one call and returns its result; a channel error fails the test.
func call(t testing.TB, c *client.Conn, name string, args any) client.Result {
	t.Helper()
	var raw json.RawMessage
	if args != nil {
		raw = mustArgs(args)
	}
	res, err := c.Call(context.Background(), name, raw)
	if err != nil {
		t.Fatalf("Call(%s): %v", name, err)
	}
	return res
}

// expect checks a result: code "" means completed without a refusal.
func expect(t testing.TB, res client.Result, code authz.Code) {
	t.Helper()
	if code == "" {
		if res.Outcome != client.Completed || res.Refusal != nil {
			t.Errorf("result = %+v, want completed", res)
		}
		return
	}
	if res.Outcome != client.NotStarted || res.Refusal == nil || res.Refusal.Code != string(code) {
		t.Errorf("result = %+v (%s), want NOT_STARTED %s", res, res.Text(), code)
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// fakeClock is a settable clock for Config.Now.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Now().UnixNano()) // envelopes' deadlines are compared with it
	return c
}

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

func selfPIDValue() int { return os.Getpid() }
