package x11

import (
	"slices"
	"testing"

	"github.com/jezek/xgb/xproto"
)

// fakeKeymap has keycodes 8–12, 7 keysyms each: 'a' on 8, 'b'/'B' on 11, and 9 and 10 spare.
func fakeKeymap(levels int) *keymap {
	km := &keymap{min: 8, max: 12, per: 7, syms: make([]xproto.Keysym, 5*7), spare: []xproto.Keycode{9, 10}, levels: levels}
	km.row(8)[0] = 'a'
	km.row(11)[0], km.row(11)[1] = 'b', 'B'
	return km
}

func TestLayoutRemap(t *testing.T) {
	const s1, s2, s3, s4, s5 xproto.Keysym = 0x1004e00, 0x1004e01, 0x1004e02, 0x1004e03, 0x1004e04
	tests := []struct {
		name  string
		syms  []xproto.Keysym
		rows  map[xproto.Keycode][]xproto.Keysym
		slots map[xproto.Keysym]slot
	}{
		{"one symbol, also on the shifted level", []xproto.Keysym{s1},
			map[xproto.Keycode][]xproto.Keysym{9: {s1, s1, 0, 0, 0, 0, 0}},
			map[xproto.Keysym]slot{s1: {kc: 9}}},
		{"the first group of every keycode first", []xproto.Keysym{s1, s2, s3},
			map[xproto.Keycode][]xproto.Keysym{9: {s1, s2, 0, 0, 0, 0, 0}, 10: {s3, s3, 0, 0, 0, 0, 0}},
			map[xproto.Keysym]slot{s1: {kc: 9}, s2: {kc: 9, shift: true}, s3: {kc: 10}}},
		{"then the second group in columns 2 and 3", []xproto.Keysym{s1, s2, s3, s4, s5},
			map[xproto.Keycode][]xproto.Keysym{9: {s1, s2, s5, s5, 0, 0, 0}, 10: {s3, s4, 0, 0, 0, 0, 0}},
			map[xproto.Keysym]slot{s1: {kc: 9}, s2: {kc: 9, shift: true}, s3: {kc: 10}, s4: {kc: 10, shift: true},
				s5: {kc: 9, group2: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, order, slots := layoutRemap(fakeKeymap(4), tt.syms)
			if len(rows) != len(tt.rows) || len(order) != len(tt.rows) {
				t.Fatalf("layoutRemap rows = %v (order %v), want %v", rows, order, tt.rows)
			}
			for kc, want := range tt.rows {
				if !slices.Equal(rows[kc], want) {
					t.Errorf("row of %d = %x, want %x", kc, rows[kc], want)
				}
			}
			for ks, want := range tt.slots {
				if slots[ks] != want {
					t.Errorf("slot of %x = %+v, want %+v", ks, slots[ks], want)
				}
			}
		})
	}
}

func TestPlanBatches(t *testing.T) {
	cjk := func(n int) []xproto.Keysym {
		var out []xproto.Keysym
		for i := range n {
			out = append(out, 0x1004e00+xproto.Keysym(i))
		}
		return out
	}
	tests := []struct {
		name    string
		syms    []xproto.Keysym
		levels  int
		batches []int // distinct missing symbols per batch
	}{
		{"on the keymap", []xproto.Keysym{'a', 'b', 'B', 'A'}, 2, []int{0}},
		{"four fit two keycodes of two levels", append(cjk(4), cjk(4)...), 2, []int{4}},
		{"five need two batches of two levels", cjk(5), 2, []int{4, 1}},
		{"eight fit two keycodes of four levels", append(cjk(8), 'a'), 4, []int{8}},
		{"nine need two batches of four levels", cjk(9), 4, []int{8, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bs, err := planBatches(fakeKeymap(tt.levels), tt.syms, tt.levels)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			n := 0
			for _, b := range bs {
				got = append(got, len(b.missing))
				n += len(b.syms)
			}
			if !slices.Equal(got, tt.batches) || n != len(tt.syms) {
				t.Errorf("planBatches = %v missing per batch, %d symbols; want %v, %d", got, n, tt.batches, len(tt.syms))
			}
		})
	}
}
