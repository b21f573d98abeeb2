package x11_test

import (
	"fmt"
	"testing"

	"github.com/cua-host/cua-host/x11"
	"github.com/jezek/xgb/xproto"
)

var comboTests = []struct {
	name string
	in   string
	mods []xproto.Keysym
	keys []xproto.Keysym
	err  error
}{
	{"hotkey", "ctrl+shift+t", []xproto.Keysym{0xffe3, 0xffe1}, []xproto.Keysym{'t'}, nil},
	{"capital letter is the key", "ctrl+T", []xproto.Keysym{0xffe3}, []xproto.Keysym{'t'}, nil},
	{"named", "Return", nil, []xproto.Keysym{0xff0d}, nil},
	{"function key", "F5", nil, []xproto.Keysym{0xffc2}, nil},
	{"super alone", "super", []xproto.Keysym{0xffeb}, nil, nil},
	{"page down", "Page_Down", nil, []xproto.Keysym{0xff56}, nil},
	{"plus key", "ctrl++", []xproto.Keysym{0xffe3}, []xproto.Keysym{'+'}, nil},
	{"bare plus", "+", nil, []xproto.Keysym{'+'}, nil},
	{"unicode", "alt+é", []xproto.Keysym{0xffe9}, []xproto.Keysym{0xe9}, nil},
	{"code point", "U+2192", nil, []xproto.Keysym{0x1002192}, nil},
	{"hex keysym", "0xff0d", nil, []xproto.Keysym{0xff0d}, nil},
	{"unknown", "ctrl+nosuchkey", nil, nil, x11.ErrUnknownKey},
	{"empty", "", nil, nil, x11.ErrUnknownKey},
	{"dangling plus", "ctrl+", nil, nil, x11.ErrUnknownKey},
	{"too many", "a+b+c+d+e+f+g+h+i", nil, nil, x11.ErrInvalidArgument},
}

func TestParseKeyCombo(t *testing.T) {
	for _, tc := range comboTests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := x11.ParseKeyCombo(tc.in)
			if tc.err != nil {
				if !errorsIs(err, tc.err) {
					t.Fatalf("ParseKeyCombo(%q) = %v, %v, want %v", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || fmt.Sprint(got.Mods) != fmt.Sprint(tc.mods) || fmt.Sprint(got.Keys) != fmt.Sprint(tc.keys) {
				t.Fatalf("ParseKeyCombo(%q) = %+v, %v, want mods %v keys %v", tc.in, got, err, tc.mods, tc.keys)
			}
		})
	}
}

func FuzzParseKeyCombo(f *testing.F) {
	for _, tc := range comboTests {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kc, err := x11.ParseKeyCombo(s)
		if err == nil && len(kc.Mods)+len(kc.Keys) == 0 {
			t.Fatalf("ParseKeyCombo(%q) gave an empty combination without error", s)
		}
		if err != nil && !errorsIs(err, x11.ErrUnknownKey) && !errorsIs(err, x11.ErrInvalidArgument) {
			t.Fatalf("ParseKeyCombo(%q) error %v is not a sentinel", s, err)
		}
	})
}

func ExampleParseKeyCombo() {
	kc, _ := x11.ParseKeyCombo("ctrl+shift+t")
	fmt.Println(len(kc.Mods), x11.KeysymName(kc.Mods[0]), x11.KeysymName(kc.Mods[1]), x11.KeysymName(kc.Keys[0]))
	// Output: 2 ctrl shift t
}
