package wire

import (
	"encoding/binary"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

func FuzzDecodeControl(f *testing.F) {
	f.Add(mustMarshal(createFrame), uint8(1))
	f.Add(mustMarshal(revokeFrame), uint8(0))
	f.Add(mustMarshal(&cuav1.ControlFrame{ProtocolVersion: 1, Body: &cuav1.ControlFrame_Hello{Hello: &cuav1.Hello{MinVersion: 1, MaxVersion: 1, Generation: make([]byte, 16)}}}), uint8(0))
	f.Add(mustMarshal(&cuav1.ControlFrame{ProtocolVersion: 1, Body: &cuav1.ControlFrame_PersonActivity{PersonActivity: &cuav1.PersonActivity{Active: true}}}), uint8(0))
	f.Add(mustMarshal(&cuav1.ControlFrame{ProtocolVersion: 1, CallId: 3, Body: &cuav1.ControlFrame_ConsentRequest{ConsentRequest: &cuav1.ConsentRequest{
		Label: "s", Tool: "zoom", Resource: "file:/tmp/x", Operation: "write", Path: "/tmp/x",
		Kind: cuav1.ConsentResourceKind_CONSENT_RESOURCE_KIND_FILE, Op: cuav1.ConsentOperation_CONSENT_OPERATION_WRITE}}}), uint8(0))
	f.Add(mustMarshal(&cuav1.ControlFrame{ProtocolVersion: 1, CallId: 4, Body: &cuav1.ControlFrame_ConsentRequest{ConsentRequest: &cuav1.ConsentRequest{
		Label: "s", Kind: cuav1.ConsentResourceKind(77), Op: cuav1.ConsentOperation(-1)}}}), uint8(0))
	f.Add([]byte{0xff, 0xff}, uint8(0))
	f.Add([]byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, nfds uint8) {
		frame, err := DecodeControl(b, int(nfds%4))
		if err != nil {
			if _, ok := IsViolation(err); !ok {
				t.Fatalf("DecodeControl error %v is not a violation", err)
			}
			return
		}
		if frame.GetProtocolVersion() == 0 || frame.GetBody() == nil {
			t.Fatalf("DecodeControl accepted %v", frame)
		}
		_, isCreate := frame.GetBody().(*cuav1.ControlFrame_CreateSession)
		if isCreate != (nfds%4 == 1) {
			t.Fatalf("DecodeControl accepted %s with %d descriptors", KindOf(frame), nfds%4)
		}
		again, err := DecodeControl(mustMarshal(frame), int(nfds%4))
		if err != nil || !proto.Equal(again, frame) {
			t.Fatalf("re-encoded frame does not decode to itself: %v", err)
		}
	})
}

func FuzzDecodeEnvelope(f *testing.F) {
	f.Add(mustMarshal(&cuav1.Envelope{ProtocolVersion: 1, RequestId: 1, Generation: make([]byte, 16), Body: &cuav1.Envelope_CallTool{CallTool: &cuav1.CallTool{Name: "noop", Arguments: []byte(`{"a":1}`)}}}))
	f.Add(mustMarshal(&cuav1.Envelope{ProtocolVersion: 1, RequestId: 2, Body: &cuav1.Envelope_Cancel{Cancel: &cuav1.Cancel{RequestId: 1}}}))
	f.Add([]byte{0x08})
	f.Fuzz(func(t *testing.T, b []byte) {
		env, err := DecodeEnvelope(b)
		if err != nil {
			if _, ok := IsViolation(err); !ok {
				t.Fatalf("DecodeEnvelope error %v is not a violation", err)
			}
			return
		}
		if env.GetProtocolVersion() == 0 || env.GetBody() == nil {
			t.Fatalf("DecodeEnvelope accepted %v", env)
		}
	})
}

// FuzzSessionStream writes arbitrary bytes into a real session socketpair and reads
// envelopes until the stream ends: the reader never panics, never hangs, and ends with
// ErrClosed or a violation.
func FuzzSessionStream(f *testing.F) {
	valid := mustMarshal(&cuav1.Envelope{ProtocolVersion: 1, RequestId: 1, Body: &cuav1.Envelope_ListTools{ListTools: &cuav1.ListTools{}}})
	f.Add(append(binary.BigEndian.AppendUint32(nil, uint32(len(valid))), valid...))
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		a, r := sessionPair(t)
		go func() {
			a.SendRaw(b)
			a.Close()
		}()
		for i := 0; ; i++ {
			_, err := r.Recv()
			if err == nil {
				continue
			}
			if _, ok := IsViolation(err); !ok && !errors.Is(err, ErrClosed) {
				t.Fatalf("Recv error %v is neither a violation nor ErrClosed", err)
			}
			return
		}
	})
}
