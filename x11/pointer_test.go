package x11_test

import (
	"testing"
	"time"

	"github.com/cua-host/cua-host/test/xevlog/harness"
	"github.com/cua-host/cua-host/x11"
)

func TestClickLandsAtWindowCoordinates(t *testing.T) {
	b := open(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 400, Height: 300})
	w := windowOf(t, b, xl)
	activate(t, b, w.ID)
	tests := []struct {
		name   string
		x, y   int
		button x11.Button
		count  int
	}{
		{"left single", 10, 20, x11.ButtonLeft, 1},
		{"right single", 200, 150, x11.ButtonRight, 1},
		{"middle double", 399, 299, x11.ButtonMiddle, 2},
		{"left triple", 0, 0, x11.ButtonLeft, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			xl.Reset()
			p := x11.Point{X: w.Frame.X + tc.x, Y: w.Frame.Y + tc.y}
			if err := b.Core().Click(t.Context(), p, tc.button, tc.count, nil); err != nil {
				t.Fatalf("Click: %v", err)
			}
			evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool {
				return len(harness.Filter(evs, "button_release")) >= tc.count
			})
			btn := harness.Filter(evs, "button_press", "button_release")
			if len(btn) != 2*tc.count {
				t.Fatalf("got %d button events, want %d: %+v", len(btn), 2*tc.count, btn)
			}
			for i, e := range btn {
				want := "button_press"
				if i%2 == 1 {
					want = "button_release"
				}
				if e.Type != want || e.Button != int(tc.button) || e.X != tc.x || e.Y != tc.y {
					t.Errorf("event %d = %s button %d at (%d,%d), want %s button %d at (%d,%d)",
						i, e.Type, e.Button, e.X, e.Y, want, tc.button, tc.x, tc.y)
				}
			}
			if got, _ := b.Core().Pointer(t.Context()); got != p {
				t.Errorf("Pointer() = %v, want %v", got, p)
			}
		})
	}
}

func TestDragIsPressMotionsRelease(t *testing.T) {
	b := open(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{Width: 400, Height: 300})
	w := windowOf(t, b, xl)
	activate(t, b, w.ID)
	xl.Reset()
	from := x11.Point{X: w.Frame.X + 50, Y: w.Frame.Y + 50}
	to := x11.Point{X: w.Frame.X + 250, Y: w.Frame.Y + 150}
	if err := b.Core().Drag(t.Context(), from, to, x11.ButtonLeft, 10, 100*time.Millisecond, nil); err != nil {
		t.Fatalf("Drag: %v", err)
	}
	evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool {
		return len(harness.Filter(evs, "button_release")) == 1
	})
	evs = harness.Filter(evs, "button_press", "motion", "button_release")
	var press, release = -1, -1
	motions := 0
	for i, e := range evs {
		switch e.Type {
		case "button_press":
			press = i
			if e.X != 50 || e.Y != 50 {
				t.Errorf("press at (%d,%d), want (50,50)", e.X, e.Y)
			}
		case "motion":
			if press >= 0 && release < 0 {
				motions++
			}
		case "button_release":
			release = i
			if e.X != 250 || e.Y != 150 {
				t.Errorf("release at (%d,%d), want (250,150)", e.X, e.Y)
			}
		}
	}
	if press < 0 || release < press || motions < 5 {
		t.Fatalf("want press, ≥5 motions, release in order; got press=%d release=%d motions=%d: %+v", press, release, motions, evs)
	}
}

func TestScrollButtons(t *testing.T) {
	b := open(t)
	xl := harness.StartXevlog(t, harness.XevlogOptions{})
	w := windowOf(t, b, xl)
	activate(t, b, w.ID)
	for _, tc := range []struct {
		dir    string
		button int
	}{{"up", 4}, {"down", 5}, {"left", 6}, {"right", 7}} {
		t.Run(tc.dir, func(t *testing.T) {
			xl.Reset()
			if err := b.Core().Scroll(t.Context(), x11.Point{X: w.Frame.X + 10, Y: w.Frame.Y + 10}, tc.dir, 3, nil); err != nil {
				t.Fatalf("Scroll: %v", err)
			}
			evs := xl.WaitFor(t, 5*time.Second, func(evs []harness.Event) bool {
				return len(harness.Filter(evs, "button_release")) == 3
			})
			for _, e := range harness.Filter(evs, "button_press", "button_release") {
				if e.Button != tc.button {
					t.Errorf("button %d, want %d", e.Button, tc.button)
				}
			}
		})
	}
}

func TestPointOutOfBounds(t *testing.T) {
	b := open(t)
	for _, p := range []x11.Point{{X: -1, Y: 0}, {X: 0, Y: -5}, {X: 1280, Y: 0}, {X: 5, Y: 1 << 20}} {
		if err := b.Core().Click(t.Context(), p, x11.ButtonLeft, 1, nil); err == nil || !errorsIs(err, x11.ErrOutOfBounds) {
			t.Errorf("Click(%v) = %v, want ErrOutOfBounds", p, err)
		}
	}
}
