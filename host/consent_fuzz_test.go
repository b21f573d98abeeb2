package host

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/cua-host/cua-host/authz"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// FuzzConsentRequestFromProto: whatever bytes a worker sends as a ConsentRequest, the
// host either refuses them or hands the provider a kind and an operation that a consent
// request can name, with Operation spelling Op.
func FuzzConsentRequestFromProto(f *testing.F) {
	for _, r := range []*cuav1.ConsentRequest{
		{Label: "s", Tool: "click", Resource: "window:pid=1,id=0x2", Operation: "input",
			Kind: cuav1.ConsentResourceKind_CONSENT_RESOURCE_KIND_WINDOW, Op: cuav1.ConsentOperation_CONSENT_OPERATION_INPUT},
		{Label: "s", Tool: "zoom", Resource: "file:/tmp/x", Kind: cuav1.ConsentResourceKind_CONSENT_RESOURCE_KIND_FILE,
			Op: cuav1.ConsentOperation_CONSENT_OPERATION_WRITE, Path: "/tmp/x"},
		{Label: "s", Tool: "launch_app", Kind: cuav1.ConsentResourceKind(99), Op: cuav1.ConsentOperation_CONSENT_OPERATION_LAUNCH},
		{Label: "s", Resource: "display", Operation: "observe"}, // no enums: refused
	} {
		b, err := proto.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var req cuav1.ConsentRequest
		if proto.Unmarshal(b, &req) != nil {
			return
		}
		got, err := consentRequestFromProto(&req)
		if err != nil {
			return
		}
		if authz.ConsentKindToProto(got.Kind) != req.GetKind() || authz.ConsentOpToProto(got.Op) != req.GetOp() {
			t.Fatalf("decoded kind %v op %v from wire %v %v", got.Kind, got.Op, req.GetKind(), req.GetOp())
		}
		if req.GetKind() == cuav1.ConsentResourceKind_CONSENT_RESOURCE_KIND_UNSPECIFIED || req.GetOp() == cuav1.ConsentOperation_CONSENT_OPERATION_UNSPECIFIED {
			t.Fatalf("accepted an unspecified kind or operation: %v", &req)
		}
		if got.Operation != got.Op.String() {
			t.Fatalf("Operation %q does not spell Op %v", got.Operation, got.Op)
		}
	})
}
