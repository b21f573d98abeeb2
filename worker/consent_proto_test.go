package worker

import (
	"testing"

	"github.com/cua-host/cua-host/authz"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// TestConsentRequestEnums: every resource the worker asks consent for travels with its
// kind and operation as the wire's enums, which decode back to the same values, a file
// with its path and a launch with its command line in their own fields.
func TestConsentRequestEnums(t *testing.T) {
	for _, r := range []authz.Resource{
		{Kind: authz.ResourceWindow, Op: authz.OpInput, PID: 12, Window: 0x400001, Title: "t", Executable: "/usr/bin/xterm"},
		{Kind: authz.ResourceProcess, Op: authz.OpTerminate, PID: 12},
		{Kind: authz.ResourceDisplay, Op: authz.OpObserve},
		{Kind: authz.ResourceClipboard, Op: authz.OpObserve},
		{Kind: authz.ResourceApplication, Op: authz.OpLaunch, Executable: "/usr/bin/xterm", Argv: []string{"/usr/bin/xterm", "-e", "a b"}},
		{Kind: authz.ResourceFile, Op: authz.OpWrite, Path: "/tmp/out.png"},
	} {
		req := consentRequest("s", "tool", r)
		kind, kerr := authz.ConsentKindFromProto(req.GetKind())
		op, oerr := authz.ConsentOpFromProto(req.GetOp())
		if kerr != nil || oerr != nil || kind != r.Kind || op != r.Op {
			t.Errorf("%v %v: wire %v %v decodes to %v %v (%v, %v)", r.Kind, r.Op, req.GetKind(), req.GetOp(), kind, op, kerr, oerr)
		}
		if req.GetResource() != r.String() || req.GetOperation() != r.Op.String() {
			t.Errorf("%v: resource %q operation %q", r.Kind, req.GetResource(), req.GetOperation())
		}
		if wantPath := map[bool]string{true: r.Path}[r.Kind == authz.ResourceFile]; req.GetPath() != wantPath {
			t.Errorf("%v: path %q, want %q", r.Kind, req.GetPath(), wantPath)
		}
		if r.Kind == authz.ResourceApplication && req.GetCommand() != "/usr/bin/xterm -e 'a b'" {
			t.Errorf("launch command %q", req.GetCommand())
		}
	}
	// A kind no consent request names goes out unspecified, which the host refuses.
	if req := consentRequest("s", "tool", authz.Resource{Kind: authz.ResourceWindowList, Op: authz.OpObserve}); req.GetKind() != cuav1.ConsentResourceKind_CONSENT_RESOURCE_KIND_UNSPECIFIED {
		t.Errorf("window list consent kind %v", req.GetKind())
	}
}
