package wire

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// maxNesting bounds the depth checkStrict walks; our schema nests far less deeply.
const maxNesting = 8

// checkStrict rejects any message that carries unknown fields anywhere. An unknown field
// means the peer speaks a schema we do not, and the frame is refused rather than half
// understood.
func checkStrict(m protoreflect.Message, depth int) error {
	if depth > maxNesting {
		return violation("too_deep", "message nests deeper than %d levels", maxNesting)
	}
	if u := m.GetUnknown(); len(u) > 0 {
		return violation("unknown_field", "%s carries %d bytes of unknown fields", m.Descriptor().FullName(), len(u))
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
			return true
		}
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				err = checkStrict(l.Get(i).Message(), depth+1)
			}
		case fd.IsMap():
			err = fmt.Errorf("wire: unexpected map field %s", fd.FullName())
		default:
			err = checkStrict(v.Message(), depth+1)
		}
		return err == nil
	})
	return err
}

// checkEnvelopeStrict is checkStrict specialised to the envelope's fixed shape: the hot path
// of every call, without reflection.
func checkEnvelopeStrict(env *cuav1.Envelope) error {
	msgs := make([]protoreflect.ProtoMessage, 0, 8)
	msgs = append(msgs, env)
	switch b := env.GetBody().(type) {
	case *cuav1.Envelope_ListTools:
		msgs = append(msgs, b.ListTools)
	case *cuav1.Envelope_CallTool:
		msgs = append(msgs, b.CallTool)
	case *cuav1.Envelope_Cancel:
		msgs = append(msgs, b.Cancel)
	case *cuav1.Envelope_ToolList:
		msgs = append(msgs, b.ToolList)
		for _, t := range b.ToolList.GetTools() {
			msgs = append(msgs, t)
		}
	case *cuav1.Envelope_ToolResult:
		msgs = append(msgs, b.ToolResult)
		if r := b.ToolResult.GetRefusal(); r != nil {
			msgs = append(msgs, r)
		}
		for _, c := range b.ToolResult.GetContent() {
			msgs = append(msgs, c)
			if img := c.GetImage(); img != nil {
				msgs = append(msgs, img)
			}
		}
	}
	for _, m := range msgs {
		if m == nil {
			continue
		}
		r := m.ProtoReflect()
		if u := r.GetUnknown(); len(u) > 0 {
			return violation("unknown_field", "%s carries %d bytes of unknown fields", r.Descriptor().FullName(), len(u))
		}
	}
	return nil
}
