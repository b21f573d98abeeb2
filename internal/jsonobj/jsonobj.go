// Package jsonobj decodes a JSON object into map[string]any without reflection, giving
// exactly what encoding/json's Unmarshal into an empty interface gives: float64 numbers,
// strings, bools, nil, []any and map[string]any, the last of duplicate keys winning.
//
// It reads the plain JSON that tool arguments are: at most MaxLen bytes, objects and arrays
// nested at most MaxDepth deep, numbers within float64's range, and strings without \u
// escapes and of valid UTF-8. Anything else, malformed input included, it declines (ok is
// false) rather than decode differently; the caller then decodes with encoding/json, which
// also words the error. It is not a general JSON library: it neither encodes nor reports
// errors.
package jsonobj

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDepth is how deeply objects and arrays may nest (the top-level object is depth 1).
const MaxDepth = 32

// MaxLen is the longest input decoded. The strings of a result share one copy of the
// input, so a string kept after the call (a session label, say) keeps at most MaxLen bytes
// alive; encoding/json, which the caller falls back to, copies each string on its own.
const MaxLen = 1024

// Decode returns the JSON object raw holds, with ok true, when raw is one object (with
// optional surrounding whitespace) in the plain subset the package reads. The result is what
// json.Unmarshal(raw, &v) with v of type any would leave in v. Strings in the result share
// one copy of raw; raw itself is not kept.
func Decode(raw []byte) (obj map[string]any, ok bool) {
	if len(raw) > MaxLen {
		return nil, false
	}
	// Only an object is decoded: decline anything else before copying raw.
	i := 0
	for i < len(raw) && isSpace(raw[i]) {
		i++
	}
	if i == len(raw) || raw[i] != '{' {
		return nil, false
	}
	d := decoder{s: string(raw), i: i + 1}
	obj, ok = d.object(1)
	if !ok {
		return nil, false
	}
	d.space()
	if d.i != len(d.s) {
		return nil, false
	}
	return obj, true
}

// decoder reads s from i on.
type decoder struct {
	s string
	i int
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (d *decoder) space() {
	for d.i < len(d.s) && isSpace(d.s[d.i]) {
		d.i++
	}
}

// object reads the rest of an object whose '{' was read, at nesting depth.
func (d *decoder) object(depth int) (map[string]any, bool) {
	m := make(map[string]any)
	d.space()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return nil, false
		}
		d.i++
		k, ok := d.str()
		if !ok {
			return nil, false
		}
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return nil, false
		}
		d.i++
		d.space()
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		m[k] = v
		if done, ok := d.next('}'); !ok {
			return nil, false
		} else if done {
			return m, true
		}
	}
}

// next reads what follows a member or an element: a ',' (more follow) or closer (done).
func (d *decoder) next(closer byte) (done, ok bool) {
	d.space()
	if d.i >= len(d.s) {
		return false, false
	}
	switch d.s[d.i] {
	case ',':
		d.i++
		d.space()
		return false, true
	case closer:
		d.i++
		return true, true
	}
	return false, false
}

// array reads the rest of an array whose '[' was read, at nesting depth.
func (d *decoder) array(depth int) ([]any, bool) {
	a := []any{}
	d.space()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		return a, true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if done, ok := d.next(']'); !ok {
			return nil, false
		} else if done {
			return a, true
		}
	}
}

// value reads one value inside a container at depth.
func (d *decoder) value(depth int) (any, bool) {
	if d.i >= len(d.s) {
		return nil, false
	}
	switch c := d.s[d.i]; {
	case c == '"':
		d.i++
		s, ok := d.str()
		return s, ok
	case c == '{':
		if depth >= MaxDepth {
			return nil, false
		}
		d.i++
		return d.object(depth + 1)
	case c == '[':
		if depth >= MaxDepth {
			return nil, false
		}
		d.i++
		return d.array(depth + 1)
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	}
	return nil, false
}

// literal consumes lit.
func (d *decoder) literal(lit string) bool {
	if !strings.HasPrefix(d.s[d.i:], lit) {
		return false
	}
	d.i += len(lit)
	return true
}

// number reads a number in JSON's grammar (-?int frac? exp?) as float64, declining one
// out of float64's range (encoding/json refuses it with an error this package does not
// word).
func (d *decoder) number() (float64, bool) {
	start := d.i
	neg := d.s[d.i] == '-'
	if neg {
		d.i++
	}
	switch {
	case d.i < len(d.s) && d.s[d.i] == '0':
		d.i++
	case d.digits() == 0:
		return 0, false
	}
	if d.i == len(d.s) || d.s[d.i] != '.' && d.s[d.i] != 'e' && d.s[d.i] != 'E' {
		if f, ok := smallInt(d.s[start:d.i], neg); ok {
			return f, true
		}
	}
	if d.i < len(d.s) && d.s[d.i] == '.' {
		d.i++
		if d.digits() == 0 {
			return 0, false
		}
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if d.digits() == 0 {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(d.s[start:d.i], 64)
	return f, err == nil
}

// smallInt returns the integer s (digits after an optional '-') when it has at most 15
// digits: such an integer is below 2^53, so float64 holds it exactly and ParseFloat would
// return the same value.
func smallInt(s string, neg bool) (float64, bool) {
	if neg {
		s = s[1:]
	}
	if len(s) > 15 {
		return 0, false
	}
	n := int64(0)
	for i := 0; i < len(s); i++ {
		n = n*10 + int64(s[i]-'0')
	}
	if neg {
		return -float64(n), true // -0 for "-0", as ParseFloat
	}
	return float64(n), true
}

// digits consumes decimal digits and returns how many.
func (d *decoder) digits() int {
	start := d.i
	for d.i < len(d.s) && '0' <= d.s[d.i] && d.s[d.i] <= '9' {
		d.i++
	}
	return d.i - start
}

// str reads the rest of a string whose '"' was read. Without escapes it is a substring of
// d.s; the one-character escapes are decoded; \u escapes, control characters and invalid
// UTF-8 are declined (encoding/json replaces bad surrogates and bytes with U+FFFD).
func (d *decoder) str() (string, bool) {
	start := d.i
	var b []byte // the decoded string once an escape was seen
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			if b == nil {
				s := d.s[start:d.i]
				d.i++
				return s, true
			}
			d.i++
			return string(b), true
		case c == '\\':
			if d.i+1 >= len(d.s) {
				return "", false
			}
			e := unescape(d.s[d.i+1])
			if e == 0 {
				return "", false
			}
			if b == nil {
				b = append(make([]byte, 0, d.i-start+16), d.s[start:d.i]...)
			}
			b = append(b, e)
			d.i += 2
		case c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			if b != nil {
				b = append(b, c)
			}
			d.i++
		default:
			r, size := utf8.DecodeRuneInString(d.s[d.i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			if b != nil {
				b = append(b, d.s[d.i:d.i+size]...)
			}
			d.i += size
		}
	}
	return "", false
}

// unescape returns the byte a one-character escape \c stands for, or 0 when the package
// does not decode \c.
func unescape(c byte) byte {
	switch c {
	case '"', '\\', '/':
		return c
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return 0
}
