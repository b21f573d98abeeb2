package hosttest

import (
	"strings"
	"testing"
)

func TestBoundedBuffer(t *testing.T) {
	b := &boundedBuffer{}
	b.Write([]byte("start\n"))
	chunk := strings.Repeat("x", 1<<20)
	for range 6 {
		b.Write([]byte(chunk))
	}
	b.Write([]byte("\npanic: end\n"))
	s := b.String()
	if !strings.HasPrefix(s, "start\n") || !strings.HasSuffix(s, "panic: end\n") || !strings.Contains(s, "bytes cut") {
		t.Errorf("bounded buffer lost its head, tail or cut mark (len %d)", len(s))
	}
	if len(s) > MaxRawStderr+100 {
		t.Errorf("bounded buffer holds %d bytes, limit %d", len(s), MaxRawStderr)
	}
}
