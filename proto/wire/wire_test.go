package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func controlPair(t testing.TB) (*ControlConn, *ControlConn) {
	t.Helper()
	a, b, err := ControlPair()
	if err != nil {
		t.Fatal(err)
	}
	ca, err := NewControlConn(a)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := NewControlConn(b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ca.Close(); cb.Close() })
	return ca, cb
}

func sessionPair(t testing.TB) (*SessionConn, *SessionConn) {
	t.Helper()
	a, b, err := SessionPair()
	if err != nil {
		t.Fatal(err)
	}
	ca, err := NewSessionConn(a)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := NewSessionConn(b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ca.Close(); cb.Close() })
	return ca, cb
}

func countFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func pipeFDs(t testing.TB, n int) []int {
	t.Helper()
	var fds []int
	for range n {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		fd, err := rawFD(w)
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
	}
	return fds
}

var (
	createFrame = &cuav1.ControlFrame{ProtocolVersion: 1, CallId: 7, Body: &cuav1.ControlFrame_CreateSession{CreateSession: &cuav1.CreateSession{Label: "s", Mode: cuav1.Mode_MODE_STANDARD}}}
	revokeFrame = &cuav1.ControlFrame{ProtocolVersion: 1, CallId: 8, Body: &cuav1.ControlFrame_RevokeSession{RevokeSession: &cuav1.RevokeSession{All: true}}}
)

func TestControlRoundTripWithFD(t *testing.T) {
	a, b := controlPair(t)
	before := countFDs(t)
	sa, sb, err := SessionPair()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Send(createFrame, sb); err != nil {
		t.Fatalf("Send: %v", err)
	}
	sb.Close()
	got, fd, err := b.Recv()
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	if !proto.Equal(got, createFrame) {
		t.Errorf("Recv = %v, want %v", got, createFrame)
	}
	if fd == nil {
		t.Fatal("CreateSession arrived without its descriptor")
	}
	// The received descriptor is the peer of sa: a session frame crosses it.
	ca, _ := NewSessionConn(sa)
	cb, _ := NewSessionConn(fd)
	env := &cuav1.Envelope{ProtocolVersion: 1, RequestId: 1, Body: &cuav1.Envelope_ListTools{ListTools: &cuav1.ListTools{}}}
	if err := ca.Send(env); err != nil {
		t.Fatal(err)
	}
	if got, err := cb.Recv(); err != nil || !proto.Equal(got, env) {
		t.Errorf("through passed fd: %v, %v", got, err)
	}
	ca.Close()
	cb.Close()
	if after := countFDs(t); after != before {
		t.Errorf("descriptors: %d before, %d after", before, after)
	}
}

// TestControlViolationsCloseFDs: every descriptor that arrives with a refused frame is
// closed before Recv returns.
func TestControlViolationsCloseFDs(t *testing.T) {
	tests := []struct {
		name   string
		frame  []byte
		nfds   int
		reason string
	}{
		{name: "fd on revoke", frame: mustMarshal(revokeFrame), nfds: 1, reason: "unexpected_fd"},
		{name: "three fds on revoke", frame: mustMarshal(revokeFrame), nfds: 3, reason: "unexpected_fd"},
		{name: "two fds on create", frame: mustMarshal(createFrame), nfds: 2, reason: "missing_fd"},
		{name: "no fd on create", frame: mustMarshal(createFrame), nfds: 0, reason: "missing_fd"},
		{name: "fd with garbage", frame: []byte{0xff, 0xff}, nfds: 1, reason: "malformed_frame"},
		{name: "too many fds", frame: mustMarshal(createFrame), nfds: maxControlFDs + 3, reason: "truncated_control_message"},
		{name: "oversized with fd", frame: make([]byte, MaxControlFrame+1), nfds: 1, reason: "oversized_frame"},
		{name: "unknown field", frame: append(mustMarshal(revokeFrame), 0xf8, 0x07, 0x01), nfds: 0, reason: "unknown_field"},
		{name: "no version", frame: mustMarshal(&cuav1.ControlFrame{Body: revokeFrame.Body}), nfds: 0, reason: "missing_version"},
		{name: "no body", frame: mustMarshal(&cuav1.ControlFrame{ProtocolVersion: 1}), nfds: 0, reason: "unknown_kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := controlPair(t)
			fds := pipeFDs(t, tt.nfds)
			before := countFDs(t)
			if err := a.SendRaw(tt.frame, fds...); err != nil {
				t.Fatalf("SendRaw: %v", err)
			}
			_, fd, err := b.Recv()
			if fd != nil {
				t.Fatal("Recv handed out a descriptor with an error")
			}
			v, ok := IsViolation(err)
			if !ok || v.Reason != tt.reason {
				t.Fatalf("Recv error = %v, want violation %s", err, tt.reason)
			}
			if after := countFDs(t); after != before {
				t.Errorf("descriptors: %d before, %d after the refused frame", before, after)
			}
		})
	}
}

func mustMarshal(m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

func TestControlSendLimits(t *testing.T) {
	a, b := controlPair(t)
	big := &cuav1.ControlFrame{ProtocolVersion: 1, Body: &cuav1.ControlFrame_Hello{Hello: &cuav1.Hello{Generation: make([]byte, MaxControlFrame)}}}
	if err := a.Send(big, nil); err == nil {
		t.Error("Send of a frame over 1 MiB succeeded")
	}
	// A frame just under the limit goes through when the kernel grants the buffer.
	fits := &cuav1.ControlFrame{ProtocolVersion: 1, Body: &cuav1.ControlFrame_Hello{Hello: &cuav1.Hello{Generation: make([]byte, a.MaxSend()-64)}}}
	if err := a.Send(fits, nil); err != nil {
		t.Fatalf("Send of %d bytes (MaxSend %d): %v", proto.Size(fits), a.MaxSend(), err)
	}
	if _, _, err := b.Recv(); err != nil {
		t.Fatalf("Recv: %v", err)
	}
	t.Logf("MaxSend = %d", a.MaxSend())
}

func TestControlEOF(t *testing.T) {
	a, b := controlPair(t)
	a.Close()
	if _, _, err := b.Recv(); !errors.Is(err, ErrClosed) {
		t.Errorf("Recv after peer close = %v, want ErrClosed", err)
	}
	if err := b.Send(revokeFrame, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after peer close = %v, want ErrClosed", err)
	}
}

func TestSessionRoundTrip(t *testing.T) {
	a, b := sessionPair(t)
	envs := []*cuav1.Envelope{
		{ProtocolVersion: 1, RequestId: 1, Generation: make([]byte, 16), Body: &cuav1.Envelope_CallTool{CallTool: &cuav1.CallTool{Name: "noop", Arguments: []byte(`{}`)}}},
		// Larger than the read buffer.
		{ProtocolVersion: 1, RequestId: 2, Body: &cuav1.Envelope_ToolResult{ToolResult: &cuav1.ToolResult{Content: []*cuav1.Content{{Kind: &cuav1.Content_Image{Image: &cuav1.Image{Data: bytes.Repeat([]byte{9}, 5<<20)}}}}}}},
		{ProtocolVersion: 1, RequestId: 3, Body: &cuav1.Envelope_Cancel{Cancel: &cuav1.Cancel{RequestId: 1}}},
	}
	go func() {
		for _, e := range envs {
			if err := a.Send(e); err != nil {
				t.Errorf("Send: %v", err)
			}
		}
	}()
	for _, want := range envs {
		got, err := b.Recv()
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		if !proto.Equal(got, want) {
			t.Errorf("Recv request %d differs", want.GetRequestId())
		}
	}
}

func TestSessionViolations(t *testing.T) {
	frame := func(n uint32, payload []byte) []byte {
		b := binary.BigEndian.AppendUint32(nil, n)
		return append(b, payload...)
	}
	valid := mustMarshal(&cuav1.Envelope{ProtocolVersion: 1, RequestId: 1, Body: &cuav1.Envelope_ListTools{ListTools: &cuav1.ListTools{}}})
	tests := []struct {
		name    string
		raw     []byte
		reason  string // "" means ErrClosed
		withFDs int
	}{
		{name: "zero length", raw: frame(0, nil), reason: "empty_frame"},
		{name: "oversized length", raw: frame(MaxSessionFrame+1, nil), reason: "oversized_frame"},
		{name: "garbage payload", raw: frame(3, []byte{0xff, 0xff, 0xff}), reason: "malformed_frame"},
		{name: "trailing bytes inside frame", raw: frame(uint32(len(valid)+2), append(append([]byte{}, valid...), 0x08, 0x01)), reason: ""},
		{name: "no version", raw: frame(2, []byte{0x52, 0x00}), reason: "missing_version"},
		{name: "truncated", raw: frame(100, []byte{1, 2, 3}), reason: ""},
		{name: "fd on session channel", raw: frame(uint32(len(valid)), valid), reason: "unexpected_fd", withFDs: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := sessionPair(t)
			fds := pipeFDs(t, tt.withFDs)
			before := countFDs(t)
			if tt.withFDs > 0 {
				if err := a.uc.sendDatagram(tt.raw, unix.UnixRights(fds...)); err != nil {
					t.Fatal(err)
				}
			} else if err := a.SendRaw(tt.raw); err != nil {
				t.Fatal(err)
			}
			a.Close()
			env, err := b.Recv()
			if tt.name == "trailing bytes inside frame" {
				// Trailing bytes are more fields: here a repeated protocol_version, which
				// decodes (last one wins); anything else would be unknown or malformed.
				if err != nil || env.GetProtocolVersion() != 1 {
					t.Fatalf("Recv = %v, %v", env, err)
				}
				return
			}
			if tt.reason == "" {
				if !errors.Is(err, ErrClosed) {
					t.Fatalf("Recv = %v, want ErrClosed", err)
				}
				return
			}
			if v, ok := IsViolation(err); !ok || v.Reason != tt.reason {
				t.Fatalf("Recv = %v, want violation %s", err, tt.reason)
			}
			if after := countFDs(t); after > before {
				t.Errorf("descriptors: %d before, %d after", before, after)
			}
		})
	}
}

func TestSessionSendLimit(t *testing.T) {
	a, _ := sessionPair(t)
	env := &cuav1.Envelope{ProtocolVersion: 1, RequestId: 1, Body: &cuav1.Envelope_CallTool{CallTool: &cuav1.CallTool{Arguments: make([]byte, MaxSessionFrame)}}}
	err := a.Send(env)
	var se *SendError
	if err == nil || errors.As(err, &se) {
		t.Errorf("Send over the limit = %v, want a size error before any write", err)
	}
}

func TestWrongSocketType(t *testing.T) {
	a, b, err := SessionPair()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := NewControlConn(a); err == nil {
		t.Error("NewControlConn accepted a SOCK_STREAM socket")
	}
	c, d, err := ControlPair()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := NewSessionConn(c); err == nil {
		t.Error("NewSessionConn accepted a SOCK_SEQPACKET socket")
	}
}
