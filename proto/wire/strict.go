package wire

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"
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
