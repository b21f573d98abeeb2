package authz

import (
	"strings"
	"testing"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// Every kind and operation a consent request can name survives the wire, and the wire
// values the decoder does not know are refused with a message that says so.
func TestConsentEnumsRoundTrip(t *testing.T) {
	asked := 0
	for k := ResourceNone; k <= ResourceFile; k++ {
		w := ConsentKindToProto(k)
		back, err := ConsentKindFromProto(w)
		switch k {
		case ResourceNone, ResourceSession, ResourceWindowList: // consent is never asked for these
			if w != cuav1.ConsentResourceKind_CONSENT_RESOURCE_KIND_UNSPECIFIED || err == nil {
				t.Errorf("kind %v: wire %v, decoded %v, %v; want UNSPECIFIED and an error", k, w, back, err)
			}
			continue
		}
		asked++
		if err != nil || back != k {
			t.Errorf("kind %v → %v → %v, %v", k, w, back, err)
		}
	}
	if asked != len(cuav1.ConsentResourceKind_name)-1 {
		t.Errorf("%d kinds map to the wire, the enum has %d named values besides UNSPECIFIED", asked, len(cuav1.ConsentResourceKind_name)-1)
	}
	for o := OpNone; o <= OpWrite; o++ {
		w := ConsentOpToProto(o)
		back, err := ConsentOpFromProto(w)
		if o == OpNone {
			if w != cuav1.ConsentOperation_CONSENT_OPERATION_UNSPECIFIED || err == nil {
				t.Errorf("op none: wire %v, decoded %v, %v", w, back, err)
			}
			continue
		}
		if err != nil || back != o {
			t.Errorf("op %v → %v → %v, %v", o, w, back, err)
		}
	}
	for _, bad := range []int32{0, 7, 99, -1} {
		if _, err := ConsentKindFromProto(cuav1.ConsentResourceKind(bad)); err == nil || !strings.Contains(err.Error(), "unknown kind of resource") {
			t.Errorf("kind %d: err %v", bad, err)
		}
		if _, err := ConsentOpFromProto(cuav1.ConsentOperation(bad)); err == nil || !strings.Contains(err.Error(), "unknown operation") {
			t.Errorf("op %d: err %v", bad, err)
		}
	}
}
