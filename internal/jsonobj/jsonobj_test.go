package jsonobj

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// cases are inputs with whether Decode reads them (true) or declines them (false).
var cases = []struct {
	name string
	in   string
	ok   bool
}{
	{name: "empty object", in: `{}`, ok: true},
	{name: "spaced", in: " \t\r\n{ \n\"a\" :\t1 , \"b\":2 }\n ", ok: true},
	{name: "click", in: `{"pid":1234,"window_id":4194305,"x":10,"y":10.5}`, ok: true},
	{name: "literals", in: `{"t":true,"f":false,"n":null}`, ok: true},
	{name: "numbers", in: `{"a":0,"b":-0,"c":-12.5e3,"d":1E-2,"e":1e+2,"f":123456789012345678901234567890,"g":0.000001}`, ok: true},
	{name: "nested", in: `{"target":{"kind":"window","pid":1,"window_id":2},"keys":["ctrl","c"],"e":[],"o":{},"aa":[[1,[2]],{"x":[]}]}`, ok: true},
	{name: "duplicate keys, last wins", in: `{"a":1,"a":"two","b":{"c":1},"b":{"d":2}}`, ok: true},
	{name: "escapes", in: `{"text":"line\nnext\ttab \"q\" back\\slash \/ \b\f\r","k\"ey":1}`, ok: true},
	{name: "unicode", in: `{"text":"Grüße, 世界 → ✓ \uFFFD is not an escape here: �","ü":"é"}`, ok: false},
	{name: "utf-8 text", in: `{"text":"Grüße, 世界 → ✓ �","ü":"é"}`, ok: true},
	{name: "empty key and value", in: `{"":""}`, ok: true},
	{name: "reserved keys", in: `{"_mode":"x","__":1}`, ok: true},
	{name: "u escape", in: `{"a":"\u00e9"}`, ok: false},
	{name: "surrogate escape", in: `{"a":"\ud800"}`, ok: false},
	{name: "invalid utf-8", in: "{\"a\":\"\xff\"}", ok: false},
	{name: "utf-8 surrogate", in: "{\"a\":\"\xed\xa0\x80\"}", ok: false},
	{name: "invalid utf-8 in key", in: "{\"\xc3\":1}", ok: false},
	{name: "control character", in: "{\"a\":\"\x01\"}", ok: false},
	{name: "bad escape", in: `{"a":"\x"}`, ok: false},
	{name: "out of range", in: `{"a":1e400}`, ok: false},
	{name: "leading zero", in: `{"a":01}`, ok: false},
	{name: "bare minus", in: `{"a":-}`, ok: false},
	{name: "dot without digits", in: `{"a":1.}`, ok: false},
	{name: "exponent without digits", in: `{"a":1e}`, ok: false},
	{name: "plus", in: `{"a":+1}`, ok: false},
	{name: "hex", in: `{"a":0x10}`, ok: false},
	{name: "infinity", in: `{"a":Infinity}`, ok: false},
	{name: "nan", in: `{"a":NaN}`, ok: false},
	{name: "trailing comma", in: `{"a":1,}`, ok: false},
	{name: "trailing comma in array", in: `{"a":[1,]}`, ok: false},
	{name: "missing colon", in: `{"a" 1}`, ok: false},
	{name: "unquoted key", in: `{a:1}`, ok: false},
	{name: "single quotes", in: `{'a':1}`, ok: false},
	{name: "truncated", in: `{"a":1`, ok: false},
	{name: "truncated string", in: `{"a":"b`, ok: false},
	{name: "truncated escape", in: `{"a":"\`, ok: false},
	{name: "trailing data", in: `{"a":1} {}`, ok: false},
	{name: "trailing garbage", in: `{}x`, ok: false},
	{name: "misspelled literal", in: `{"a":tru}`, ok: false},
	{name: "literal with tail", in: `{"a":truex}`, ok: false},
	{name: "array at top", in: `[1,2]`, ok: false},
	{name: "string at top", in: `"a"`, ok: false},
	{name: "null at top", in: `null`, ok: false},
	{name: "empty", in: ``, ok: false},
	{name: "spaces only", in: `   `, ok: false},
	{name: "too deep", in: `{"a":` + strings.Repeat(`[`, MaxDepth) + strings.Repeat(`]`, MaxDepth) + `}`, ok: false},
	{name: "deepest", in: `{"a":` + strings.Repeat(`[`, MaxDepth-1) + strings.Repeat(`]`, MaxDepth-1) + `}`, ok: true},
	{name: "vertical tab is not space", in: "{\v}", ok: false},
	{name: "longest", in: `{"text":"` + strings.Repeat("a", MaxLen-11) + `"}`, ok: true},
	{name: "too long", in: `{"text":"` + strings.Repeat("a", MaxLen-10) + `"}`, ok: false},
}

// TestDecode: what Decode reads is what encoding/json reads, and it reads (or declines)
// each case as expected.
func TestDecode(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Decode([]byte(tc.in))
			if ok != tc.ok {
				t.Fatalf("Decode(%q) ok = %v, want %v (got %#v)", tc.in, ok, tc.ok, got)
			}
			if ok {
				sameAsJSON(t, tc.in, got)
			} else if got != nil {
				t.Errorf("Decode(%q) declined but returned %#v", tc.in, got)
			}
		})
	}
}

// TestDecodeNumbers: numbers are the float64 values ParseFloat gives, to the bit (the sign
// of zero included, which reflect.DeepEqual does not see).
func TestDecodeNumbers(t *testing.T) {
	for _, n := range []string{"0", "-0", "-0.0", "1", "-1", "999999999999999", "-999999999999999", "1000000000000000",
		"9007199254740993", "123456789012345678", "0.1", "1e2", "-1E-2", "4294967295", "2147483648"} {
		got, ok := Decode([]byte(`{"n":` + n + `}`))
		if !ok {
			t.Fatalf("Decode(%s) declined", n)
		}
		want, _ := strconv.ParseFloat(n, 64)
		if f, _ := got["n"].(float64); math.Float64bits(f) != math.Float64bits(want) {
			t.Errorf("Decode(%s) = %v (bits %x), want %v (bits %x)", n, f, math.Float64bits(f), want, math.Float64bits(want))
		}
	}
}

// TestDecodeSharesInput: the caller's buffer is not kept (it is copied once).
func TestDecodeSharesInput(t *testing.T) {
	raw := []byte(`{"a":"bc"}`)
	got, ok := Decode(raw)
	if !ok {
		t.Fatal("declined")
	}
	copy(raw, `{"a":"xy"}`)
	if got["a"] != "bc" {
		t.Errorf("Decode kept the caller's buffer: a = %q after it changed", got["a"])
	}
}

// sameAsJSON fails unless encoding/json decodes in to the object got.
func sameAsJSON(t *testing.T, in string, got map[string]any) {
	t.Helper()
	var want any
	if err := json.Unmarshal([]byte(in), &want); err != nil {
		t.Fatalf("Decode(%q) read it, but encoding/json says %v", in, err)
	}
	if !reflect.DeepEqual(any(got), want) {
		t.Fatalf("Decode(%q) = %#v, want %#v", in, got, want)
	}
}

// FuzzDecode: whatever the input, Decode either declines it or reads exactly what
// encoding/json reads; it never panics.
func FuzzDecode(f *testing.F) {
	for _, tc := range cases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, ok := Decode(in)
		if !ok {
			if got != nil {
				t.Fatalf("Decode(%q) declined but returned %#v", in, got)
			}
			return
		}
		sameAsJSON(t, string(in), got)
	})
}

func BenchmarkDecode(b *testing.B) {
	raw := []byte(`{"pid":123456,"window_id":4194305,"x":10,"y":10}`)
	b.Run("jsonobj", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := Decode(raw); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
