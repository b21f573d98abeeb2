package atspi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/a11yenv"
	"github.com/cua-host/cua-host/x11/atspi"
)

// fake starts test/fakeatspi on the shared bus.
func fake(t *testing.T, args ...string) (*a11yenv.App, atspi.Window) {
	t.Helper()
	b := a11yenv.Shared(t)
	bin := a11yenv.Build(t, t.TempDir(), "github.com/cua-host/cua-host/test/fakeatspi")
	app := a11yenv.StartHeadless(t, b, "ready", bin, args...)
	return app, atspi.Window{ID: 77, PID: app.PID, Title: "Fake", Frame: atspi.Rect{X: 100, Y: 100, Width: 300, Height: 200}}
}

func names(s *atspi.Snapshot) map[string]int {
	m := map[string]int{}
	for _, e := range s.Elements {
		m[e.Name]++
	}
	return m
}

// TestHostileTree walks a tree no toolkit builds on purpose: a cycle, another
// application's object as a child, 2^30 children, a chain deeper than the bound.
func TestHostileTree(t *testing.T) {
	c, _ := client(t, atspi.Options{})
	app, w := fake(t)
	start := time.Now()
	s := snapshot(t, c, w, atspi.WalkOptions{})
	t.Logf("walk %v (%v), %d calls, %d objects, %d elements, reasons %v, foreign %d", time.Since(start), s.Duration, s.Calls, s.Visited, len(s.Elements), s.Reasons, s.Foreign)
	n := names(s)
	if n["Fake"] != 1 || n["loop"] != 1 || n["Press me"] != 1 {
		t.Errorf("the cycle was not cut once: %v", n)
	}
	if s.Foreign != 1 {
		t.Errorf("Foreign = %d, want the registry's object skipped once", s.Foreign)
	}
	if len(s.Elements) != atspi.DefaultMaxElements || s.Visited > 4*atspi.DefaultMaxElements {
		t.Errorf("%d elements from %d objects; want %d from at most %d", len(s.Elements), s.Visited, atspi.DefaultMaxElements, 4*atspi.DefaultMaxElements)
	}
	if !contains(s.Reasons, atspi.ReasonMaxElements) || !contains(s.Reasons, atspi.ReasonMaxDepth) || n["bottom"] != 0 {
		t.Errorf("reasons %v, bottom %d; want max_elements and max_depth", s.Reasons, n["bottom"])
	}
	for i := range 5 { // the on-screen rows are kept first
		if n["cell "+string(rune('0'+i))] != 1 {
			t.Errorf("cell %d missing", i)
		}
	}
	if strings.Contains(app.Stdout(), "GetChildren big") {
		t.Error("the walk asked a table of 2^30 children for all of them")
	}
	deep := snapshot(t, c, w, atspi.WalkOptions{MaxDepth: 100, MaxElements: 20})
	if names(deep)["bottom"] != 1 || contains(deep.Reasons, atspi.ReasonMaxDepth) {
		t.Errorf("MaxDepth 100: bottom %d, reasons %v", names(deep)["bottom"], deep.Reasons)
	}
	var press *atspi.Element
	for i := range deep.Elements {
		if deep.Elements[i].Name == "Press me" {
			press = &deep.Elements[i]
		}
	}
	out, err := c.Press(t.Context(), press, atspi.PressClick)
	if err != nil || !out.Verified || !strings.Contains(app.Stdout(), "DoAction button 0") {
		t.Errorf("Press = %+v, %v; fake printed %q", out, err, app.Stdout())
	}
}

// TestHangingObject: one object never answers; the walk stops at the per-call timeout
// and keeps what it read.
func TestHangingObject(t *testing.T) {
	c, _ := client(t, atspi.Options{CallTimeout: 200 * time.Millisecond})
	_, w := fake(t, "-hang")
	start := time.Now()
	s := snapshot(t, c, w, atspi.WalkOptions{MaxElements: 50, Timeout: 5 * time.Second})
	took := time.Since(start)
	t.Logf("walk %v, %d objects, %d elements, reasons %v", took, s.Visited, len(s.Elements), s.Reasons)
	if took > 2*time.Second || !s.Truncated || !contains(s.Reasons, atspi.ReasonNotResponding) {
		t.Fatalf("took %v, truncated %v %v; want not_responding within the per-call timeout", took, s.Truncated, s.Reasons)
	}
	if n := names(s); n["Fake"] != 1 || n["Press me"] != 1 || n["stuck"] != 0 {
		t.Errorf("partial result %v", n)
	}
}
