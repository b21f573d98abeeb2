package host

import (
	"os"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/proto/contract"
)

// TestPlaceDescriptors: each file lands at its contract number whatever order it is
// given in, a number nobody takes is left closed, and a taken or reserved number is
// refused.
func TestPlaceDescriptors(t *testing.T) {
	a, b, c := os.NewFile(100, "a"), os.NewFile(101, "b"), os.NewFile(102, "c")
	extra, log, err := placeDescriptors([]inherited{
		{contract.ProxyEndpoint, c}, {contract.ProxySession, a}, {contract.ProxyBootstrap, b},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(extra) != 3 || extra[0] != a || extra[1] != b || extra[2] != c {
		t.Errorf("ExtraFiles %v, want a, b, c at 3, 4, 5", extra)
	}
	if got := strings.Join(log, " "); got != "3=session 4=bootstrap 5=endpoint" {
		t.Errorf("log %q", got)
	}
	// The credentials alone: descriptor 3 is left closed in the child.
	extra, _, err = placeDescriptors([]inherited{{contract.WorkerCredentials, a}})
	if err != nil || len(extra) != 2 || extra[0] != nil || extra[1] != a {
		t.Errorf("credentials alone: %v, %v; want [nil a]", extra, err)
	}
	if _, _, err := placeDescriptors([]inherited{{contract.WorkerControl, a}, {contract.ProxySession, b}}); err == nil || !strings.Contains(err.Error(), "both at 3") {
		t.Errorf("two at 3: %v", err)
	}
	if _, _, err := placeDescriptors([]inherited{{contract.Descriptor{FD: 2, Name: "stderr"}, a}}); err == nil || !strings.Contains(err.Error(), "below 3") {
		t.Errorf("at 2: %v", err)
	}
}
