package display

import "testing"

// follow keeps the pointer in view, followMargin from the edges where the screen allows,
// moving the view as little as possible and never past the screen's edges.
func TestFollow(t *testing.T) {
	const view, size = 1000, 1920
	for _, c := range []struct {
		name       string
		off, p     int
		want       int
		wantInView bool
	}{
		{"in view, no move", 0, 500, 0, true},
		{"right of the view", 0, 1500, 1000 - 1 - followMargin - 1500, true},
		{"at the screen's far edge", 0, 1919, view - size, true},
		{"left of a scrolled view", -800, 100, followMargin - 100, true},
		{"within the margin on the left", -800, 820, followMargin - 820, true},
		{"at the screen's origin", -920, 0, 0, true},
	} {
		got := follow(c.off, c.p, view, size)
		if got != c.want {
			t.Errorf("%s: follow(%d, %d) = %d, want %d", c.name, c.off, c.p, got, c.want)
		}
		if in := c.p+got >= 0 && c.p+got < view; in != c.wantInView {
			t.Errorf("%s: pointer %d at %d in the view", c.name, c.p, c.p+got)
		}
		if got > 0 || got < view-size {
			t.Errorf("%s: offset %d outside [%d, 0]", c.name, got, view-size)
		}
	}
	// A screen no larger than the view never moves.
	if got := follow(0, 900, 1000, 1000); got != 0 {
		t.Errorf("follow on a screen the size of the view = %d, want 0", got)
	}
}

// scrollTo sizes Xephyr's window at least as large as the view: a person who enlarges the
// window beyond the screen gets a larger screen.
func TestScrollToGrowsWithTheView(t *testing.T) {
	v := viewport{screenW: 1920, screenH: 1080, viewW: 2000, viewH: 900}
	offX, offY, w, h := v.scrollTo(1990, 1070)
	if w != 2000 || h != 1080 || offX != 0 || offY != 900-1080 {
		t.Errorf("scrollTo = %d,%d %dx%d, want 0,%d 2000x1080", offX, offY, w, h, 900-1080)
	}
}
