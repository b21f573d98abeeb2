package tool_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/cua-host/cua-host/proto/contract"
	"github.com/cua-host/cua-host/worker/tool"
)

// TestSessionSummaryEnumsFollowTheContract: the session summary's output schema spells the
// client kinds and transports proto/contract defines; a value added there must be added here.
func TestSessionSummaryEnumsFollowTheContract(t *testing.T) {
	var schema struct {
		Properties struct {
			ClientKind struct {
				Enum []string `json:"enum"`
			} `json:"client_kind"`
			Transport struct {
				Enum []string `json:"enum"`
			} `json:"transport"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(tool.OutputSchema("get_session"), &schema); err != nil {
		t.Fatalf("get_session output schema: %v", err)
	}
	var kinds, transports []string
	for _, k := range contract.ClientKinds {
		kinds = append(kinds, string(k))
	}
	for _, tr := range contract.Transports {
		transports = append(transports, string(tr))
	}
	for _, c := range []struct {
		name      string
		got, want []string
	}{{"client_kind", schema.Properties.ClientKind.Enum, kinds}, {"transport", schema.Properties.Transport.Enum, transports}} {
		got, want := slices.Sorted(slices.Values(c.got)), slices.Sorted(slices.Values(c.want))
		if !slices.Equal(got, want) {
			t.Errorf("get_session's %s enum is %v; proto/contract defines %v", c.name, got, want)
		}
	}
}
