package worker

import (
	"context"
	"slices"
	"testing"

	"github.com/cua-host/cua-host/authz"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// The X11 backend is the desktop the authorizer resolves targets through.
var _ Desktop = (*x11.Backend)(nil)

// TestInventoryCoversShippedRegistry keeps the inventory and the shipped worker's registry
// in sync: every tool a shipped worker registers has an exposed entry with the same MCP
// annotations, and every exposed entry is registered.
func TestInventoryCoversShippedRegistry(t *testing.T) {
	hello := &cuav1.Hello{Display: &cuav1.DisplayFacts{}} // no display: the tools register anyway
	reg, closer, err := DesktopRegistry(context.Background(), hello, nil)
	if err != nil {
		t.Fatal(err)
	}
	if closer != nil {
		defer closer.Close()
	}
	w := &worker{hello: hello}
	w.cfg.setDefaults()
	w.registerBuiltins(reg)
	inv := authz.DefaultInventory()
	var registered []string
	for _, tl := range reg.Tools() {
		registered = append(registered, tl.Name)
		e, r := inv.Classify(tl.Name)
		if r != nil {
			t.Errorf("registered tool %s: %v", tl.Name, r)
			continue
		}
		want := tool.Annotations{ReadOnly: e.Annotations.ReadOnly, Destructive: e.Annotations.Destructive,
			Idempotent: e.Annotations.Idempotent, OpenWorld: e.Annotations.OpenWorld}
		if tl.Annotations != want {
			t.Errorf("%s: registered annotations %+v, inventory says %+v", tl.Name, tl.Annotations, want)
		}
		if tl.Quick && e.Standard == authz.RequireGrant {
			t.Errorf("%s is Quick (runs on the session reader) but may wait for consent", tl.Name)
		}
	}
	for _, e := range inv.Entries() {
		if e.Exposed() && !slices.Contains(registered, e.Tool) {
			t.Errorf("inventory entry %s (%s) is exposed but no shipped worker registers it", e.Tool, e.State)
		}
	}
}
