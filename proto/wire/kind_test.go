package wire

import (
	"testing"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// TestKindOfNamesEveryBody: every kind of the ControlFrame's oneof has a name in KindOf
// (logs and errors never say "unknown" for a frame of the schema), and the new
// PersonActivity decodes like any other host frame: without descriptors only.
func TestKindOfNamesEveryBody(t *testing.T) {
	frame := &cuav1.ControlFrame{}
	m := frame.ProtoReflect()
	body := m.Descriptor().Oneofs().ByName("body")
	fields := body.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		f := &cuav1.ControlFrame{ProtocolVersion: 1}
		r := f.ProtoReflect()
		r.Set(fd, r.NewField(fd))
		if got := KindOf(f); got == "unknown" {
			t.Errorf("KindOf(%s) = %q, want its name", fd.Name(), got)
		}
	}
	pa := mustMarshal(&cuav1.ControlFrame{ProtocolVersion: 1, Body: &cuav1.ControlFrame_PersonActivity{PersonActivity: &cuav1.PersonActivity{Active: true}}})
	if f, err := DecodeControl(pa, 0); err != nil || !f.GetPersonActivity().GetActive() {
		t.Errorf("DecodeControl(PersonActivity) = %v, %v, want the frame", f, err)
	}
	if _, err := DecodeControl(pa, 1); err == nil {
		t.Errorf("DecodeControl(PersonActivity with a descriptor) accepted it, want a violation")
	}
}
