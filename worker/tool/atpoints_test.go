package tool_test

import (
	"testing"

	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// TestAtPointsFor checks that what the authorizer read is handed on only for exactly the
// points it read, in the same order.
func TestAtPointsFor(t *testing.T) {
	a, b := x11.Point{X: 1, Y: 2}, x11.Point{X: 3, Y: 4}
	tops := []x11.TopLevel{{Window: 10}, {Window: 20}}
	read := &tool.AtPoints{Points: []x11.Point{a, b}, Tops: tops}
	cases := []struct {
		name string
		at   *tool.AtPoints
		pts  []x11.Point
		want bool
	}{
		{"the same points", read, []x11.Point{a, b}, true},
		{"another order", read, []x11.Point{b, a}, false},
		{"fewer points", read, []x11.Point{a}, false},
		{"more points", read, []x11.Point{a, b, a}, false},
		{"another point", read, []x11.Point{a, {X: 3, Y: 5}}, false},
		{"nothing read", nil, []x11.Point{a, b}, false},
		{"answers missing", &tool.AtPoints{Points: []x11.Point{a, b}, Tops: tops[:1]}, []x11.Point{a, b}, false},
	}
	for _, c := range cases {
		got := c.at.For(c.pts)
		if (got != nil) != c.want {
			t.Errorf("%s: For = %v, want answers %v", c.name, got, c.want)
		}
	}
}
