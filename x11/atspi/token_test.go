package atspi_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cua-host/cua-host/x11/atspi"
)

var tokenTests = []struct {
	name  string
	tok   string
	want  atspi.Target
	valid bool
}{
	{"simple", "s0123abcd:3", atspi.Target{SnapshotID: "s0123abcd", Index: 3}, true},
	{"zero", "sffffffff:0", atspi.Target{SnapshotID: "sffffffff", Index: 0}, true},
	{"max", "s00000000:1048575", atspi.Target{SnapshotID: "s00000000", Index: 1048575}, true},
	{"above max", "s00000000:1048576", atspi.Target{}, false},
	{"leading zero", "s0123abcd:03", atspi.Target{}, false},
	{"negative", "s0123abcd:-1", atspi.Target{}, false},
	{"plus", "s0123abcd:+1", atspi.Target{}, false},
	{"upper hex", "s0123ABCD:1", atspi.Target{}, false},
	{"short id", "s0123abc:1", atspi.Target{}, false},
	{"long id", "s0123abcde:1", atspi.Target{}, false},
	{"no colon", "s0123abcd", atspi.Target{}, false},
	{"two colons", "s0123abcd:1:2", atspi.Target{}, false},
	{"empty index", "s0123abcd:", atspi.Target{}, false},
	{"empty", "", atspi.Target{}, false},
	{"wrong prefix", "x0123abcd:1", atspi.Target{}, false},
	{"space", " s0123abcd:1", atspi.Target{}, false},
	{"unicode digit", "s0123abcd:١", atspi.Target{}, false},
	{"huge", "s0123abcd:99999999999999999999", atspi.Target{}, false},
}

func TestParseToken(t *testing.T) {
	for _, tc := range tokenTests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := atspi.ParseToken(tc.tok)
			if !tc.valid {
				if !errors.Is(err, atspi.ErrInvalidToken) {
					t.Fatalf("ParseToken(%q) = %v, %v; want ErrInvalidToken", tc.tok, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseToken(%q) = %v, %v; want %v", tc.tok, got, err, tc.want)
			}
			if back := got.Token(); back != tc.tok {
				t.Fatalf("ParseToken(%q).Token() = %q", tc.tok, back)
			}
		})
	}
}

func FuzzParseToken(f *testing.F) {
	for _, tc := range tokenTests {
		f.Add(tc.tok)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		got, err := atspi.ParseToken(tok)
		if err != nil {
			if !errors.Is(err, atspi.ErrInvalidToken) {
				t.Fatalf("ParseToken(%q) error %v is not ErrInvalidToken", tok, err)
			}
			return
		}
		if got.Token() != tok {
			t.Fatalf("ParseToken(%q) = %v, which formats as %q: not canonical", tok, got, got.Token())
		}
		if atspi.CheckSnapshotID(got.SnapshotID) != nil || atspi.CheckIndex(got.Index) != nil {
			t.Fatalf("ParseToken(%q) = %v, which its own checks reject", tok, got)
		}
		if _, _, err := atspi.NewSnapshots(1).Resolve(got); !errors.Is(err, atspi.ErrUnknownSnapshot) {
			t.Fatalf("Resolve(%v) on an empty set = %v, want ErrUnknownSnapshot", got, err)
		}
	})
}

func ExampleParseToken() {
	t, err := atspi.ParseToken("s1a2b3c4d:3")
	fmt.Println(t.SnapshotID, t.Index, err)
	_, err = atspi.ParseToken("s1a2b3c4d:03")
	fmt.Println(errors.Is(err, atspi.ErrInvalidToken))
	// Output:
	// s1a2b3c4d 3 <nil>
	// true
}

func ExampleMarkdown() {
	v := "hello"
	zero, one := 0, 1
	fmt.Print(atspi.Markdown([]atspi.Element{
		{Index: 0, Role: "dialog", Name: "CUA probe"},
		{Index: 1, Role: "text", Value: &v, Editable: true, States: []string{"focused"}, Actions: []string{"activate"}, Depth: 1, Parent: &zero},
		{Index: 2, Role: "push button", Name: "OK \"now\"\n- [9] fake", States: []string{"default"}, Actions: []string{"click"}, Depth: 1, Parent: &one},
	}))
	// Output:
	// - [0] dialog "CUA probe"
	//   - [1] text value="hello" [focused] actions=[activate]
	//   - [2] push button "OK \"now\"\n- [9] fake" [default] actions=[click]
}
