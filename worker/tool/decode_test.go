package tool

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/authz"
)

type kindsInner struct {
	P  *int    `json:"p"`
	S  string  `json:"s"`
	Up *uint32 `json:"up"`
}

// AmbA and AmbB both define s: embedded side by side, they hide it (see ambiguous).
type (
	AmbA struct {
		S string `json:"s"`
		P *int   `json:"p"`
	}
	AmbB struct {
		S string `json:"s"`
		Q bool   `json:"q"`
	}
)

type named string

// kinds has a field of every kind the decoder fills itself.
type kinds struct {
	kindsInner
	I8    int8            `json:"i8"`
	I64   int64           `json:"i64"`
	U8    uint8           `json:"u8"`
	U64   uint64          `json:"u64"`
	Uptr  uintptr         `json:"uptr"`
	F     float64         `json:"f"`
	PF    *float64        `json:"pf"`
	PB    *bool           `json:"pb"`
	PS    *string         `json:"ps"`
	N     named           `json:"n"`
	Any   any             `json:"any"`
	Anys  []any           `json:"anys"`
	Ints  []int           `json:"ints"`
	Strs  []string        `json:"strs"`
	Raw   json.RawMessage `json:"raw"`
	Plain int
	//lint:ignore U1000 an unexported field, which the decoder must leave alone
	skip int
	Dash int `json:"-"`
}

// ambiguous is struct{ AmbA; AmbB }, built at run time (vet rightly flags the repeated
// tag when it is written out).
var ambiguous = reflect.StructOf([]reflect.StructField{
	{Name: "AmbA", Type: reflect.TypeFor[AmbA](), Anonymous: true},
	{Name: "AmbB", Type: reflect.TypeFor[AmbB](), Anonymous: true},
})

// Types the decoder leaves to encoding/json.
type (
	nested struct {
		In kindsInner `json:"in"`
	}
	mapped struct {
		M map[string]int `json:"m"`
	}
	quoted struct {
		N int `json:"n,string"`
	}
	embeddedPtr struct {
		*kindsInner
	}
	float32s struct {
		F float32 `json:"f"`
	}
	bytesField struct {
		B []byte `json:"b"`
	}
)

var kindsTypes = []func() any{
	func() any { return new(kinds) },
	func() any { return reflect.New(ambiguous).Interface() },
	func() any { return new(nested) },
	func() any { return new(mapped) },
	func() any { return new(quoted) },
	func() any { return new(embeddedPtr) },
	func() any { return new(float32s) },
	func() any { return new(bytesField) },
	func() any { return new(struct{}) },
}

func TestPlans(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want bool // the decoder fills it itself
	}{
		{name: "kinds", v: kinds{}, want: true},
		{name: "empty", v: struct{}{}, want: true},
		{name: "ambiguous", v: reflect.New(ambiguous).Elem().Interface()},
		{name: "nested", v: nested{}},
		{name: "map", v: mapped{}},
		{name: "string option", v: quoted{}},
		{name: "embedded pointer", v: embeddedPtr{}},
		{name: "float32", v: float32s{}},
		{name: "bytes", v: bytesField{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := planFor(reflect.TypeOf(tt.v)) != nil; got != tt.want {
				t.Errorf("planFor(%T) != nil = %v, want %v", tt.v, got, tt.want)
			}
		})
	}
}

// TestDecodeNumbers: numbers reach integer fields as json.Marshal writes the float64 the
// authorizer decoded (what the policy saw), not as the client wrote them.
func TestDecodeNumbers(t *testing.T) {
	tests := []struct {
		name string
		args string
		want kinds
		msg  string // the refusal's message, or "" to accept
	}{
		{name: "integral fraction", args: `{"i64":1.0}`, want: kinds{I64: 1}},
		{name: "exponent", args: `{"i64":1e3}`, want: kinds{I64: 1000}},
		{name: "fraction", args: `{"i64":1.5}`, msg: `argument "i64" must be int64, not number 1.5`},
		{name: "int8 overflow", args: `{"i8":128}`, msg: `argument "i8" must be int8, not number 128`},
		{name: "negative unsigned", args: `{"u8":-1}`, msg: `argument "u8" must be uint8, not number -1`},
		{name: "negative zero unsigned", args: `{"u64":-0}`, msg: `argument "u64" must be uint64, not number -0`},
		{name: "negative zero signed", args: `{"i64":-0}`, want: kinds{I64: 0}},
		{name: "beyond 2^53", args: `{"i64":1152921504606846976}`, want: kinds{I64: 1152921504606847000}},
		{name: "int64 overflow", args: `{"i64":9223372036854775807}`, msg: `argument "i64" must be int64, not number 9223372036854776000`},
		{name: "exponent form", args: `{"u64":1e21}`, msg: `argument "u64" must be uint64, not number 1e+21`},
		{name: "embedded", args: `{"up":4294967296}`, msg: `argument "kindsInner.up" must be uint32, not number 4294967296`},
		{name: "element", args: `{"ints":[1,2.5]}`, msg: `argument "ints" must be int, not number 2.5`},
		{name: "first key in order", args: `{"u8":"x","i8":"y"}`, msg: `argument "i8" must be int8, not string`},
		{name: "unknown first", args: `{"u8":"x","zz":1}`, msg: `unknown argument "zz"`},
		{name: "case folded", args: `{"I8":1}`, msg: `unknown argument "I8"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(tt.args), &args); err != nil {
				t.Fatal(err)
			}
			var got kinds
			err := (&Call{Arguments: args}).Decode(&got)
			var r *authz.Refusal
			switch {
			case tt.msg == "" && err != nil:
				t.Fatalf("Decode(%s) = %v, want nil", tt.args, err)
			case tt.msg != "" && (!errors.As(err, &r) || r.Code != authz.CodeInvalidArguments || r.Message != tt.msg):
				t.Fatalf("Decode(%s) = %v, want invalid_arguments %q", tt.args, err, tt.msg)
			case tt.msg == "" && !reflect.DeepEqual(got, tt.want):
				t.Fatalf("Decode(%s) = %+v, want %+v", tt.args, got, tt.want)
			}
		})
	}
}

// FuzzDecodeKinds: for every kind of field and for the types left to encoding/json,
// decoding Call.Arguments gives what DecodeArgs gives from their encoding.
func FuzzDecodeKinds(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"p":1,"s":"a","up":2,"q":true}`, `{"i8":-128,"i64":-1,"u8":255,"u64":18446744073709551615,"uptr":1}`,
		`{"f":-0,"pf":1.5,"pb":false,"ps":"x","n":"y","Plain":3}`, `{"any":{"a":[1,null,"x"]},"anys":[{},[],true]}`,
		`{"ints":[],"strs":null,"raw":{"b":"<>","a":[1.0,2e3]}}`, `{"raw":null}`, `{"anys":null,"any":null,"pf":null}`,
		`{"skip":1}`, `{"Dash":1}`, `{"-":1}`, `{"in":{"P":1}}`, `{"m":{"a":1}}`, `{"n":"12"}`, `{"f":3.4e38}`,
		`{"b":"AAEC"}`, `{"ints":[1,"a",2.5]}`, `{"strs":["a",1,null]}`, `{"plain":1}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var args map[string]any
		if json.Unmarshal([]byte(raw), &args) != nil || args == nil {
			return
		}
		encoded, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		for _, newV := range kindsTypes {
			want, got := newV(), newV()
			wantErr := DecodeArgs(encoded, want)
			gotErr := (&Call{Arguments: args}).Decode(got)
			if !sameOutcome(gotErr, wantErr) {
				t.Fatalf("%T: Decode(%s) = %v, want %v", got, raw, gotErr, wantErr)
			}
			if wantErr == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%T: Decode(%s) = %+v, want %+v", got, raw, got, want)
			}
		}
	})
}

// sameOutcome compares refusals; among several unknown arguments any may be named.
func sameOutcome(got, want error) bool {
	if got == nil || want == nil {
		return got == want
	}
	var g, w *authz.Refusal
	if !errors.As(got, &g) || !errors.As(want, &w) || g.Code != w.Code {
		return false
	}
	const unknown = "unknown argument "
	return g.Message == w.Message || strings.HasPrefix(g.Message, unknown) && strings.HasPrefix(w.Message, unknown)
}

// TestDecodeLeavesArguments: what a handler decodes into an any is its own copy.
func TestDecodeLeavesArguments(t *testing.T) {
	args := map[string]any{"any": map[string]any{"a": []any{1.0}}, "anys": []any{[]any{"x"}}}
	var k kinds
	if err := (&Call{Arguments: args}).Decode(&k); err != nil {
		t.Fatal(err)
	}
	k.Any.(map[string]any)["a"].([]any)[0] = 2.0
	k.Anys[0].([]any)[0] = "y"
	want := map[string]any{"any": map[string]any{"a": []any{1.0}}, "anys": []any{[]any{"x"}}}
	if !reflect.DeepEqual(args, want) {
		t.Errorf("Arguments = %v after the handler changed its copy, want %v", args, want)
	}
}

// clickArgs is the shape of a pointer tool's arguments.
type clickArgs struct {
	kindsInner
	WindowID *uint32  `json:"window_id"`
	X        *float64 `json:"x"`
	Y        *float64 `json:"y"`
	Button   string   `json:"button"`
	Count    *int     `json:"count"`
	Modifier []string `json:"modifier"`
}

// BenchmarkDecode measures a handler's typed decode of a click's arguments: from the
// encoding (Args) alone, and when the authorizer decoded them (Arguments).
func BenchmarkDecode(b *testing.B) {
	raw := json.RawMessage(`{"p":4242,"window_id":4194305,"x":10,"y":20,"button":"left","modifier":["ctrl"]}`)
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		call *Call
	}{
		{"args", &Call{Args: raw}},
		{"arguments", &Call{Args: raw, Arguments: args}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var a clickArgs
				if err := bc.call.Decode(&a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
