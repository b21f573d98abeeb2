package policy

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// number returns v as a float64 when v is a JSON number: float64 (what
// encoding/json produces), json.Number (Decoder.UseNumber), or any Go
// integer or float type. Booleans and numeric strings are not numbers.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case int16:
		return float64(x), true
	case int8:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint8:
		return float64(x), true
	case float32:
		return float64(x), true
	}
	return 0, false
}

// jsonEqual reports whether two JSON-compatible values are equal by value:
// numbers compare numerically whatever their Go type (so the YAML 1 equals
// the JSON 1.0), arrays element by element, objects key by key.
func jsonEqual(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

// formatNumber prints a number the way a person wrote it: 1920, 0.5, -3,
// and exponent notation only for very large or very small magnitudes.
func formatNumber(f float64) string {
	if a := math.Abs(f); a == 0 || (a >= 1e-6 && a < 1e21) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// maxQuotedName bounds how much of a name a message repeats.
const maxQuotedName = 128

// quoteName quotes a tool or argument name for a message: 'click' when the
// name is printable and has no quote or backslash, a Go-quoted string
// otherwise, so a hostile name cannot forge lines in a log. Long names are
// cut at maxQuotedName bytes.
func quoteName(s string) string {
	var b strings.Builder
	writeQuoted(&b, s)
	return b.String()
}

// writeQuoted writes quoteName(s) to b.
func writeQuoted(b *strings.Builder, s string) {
	if len(s) > maxQuotedName {
		cut := maxQuotedName
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	for _, r := range s {
		if r == '\'' || r == '\\' || r == utf8.RuneError || !unicode.IsPrint(r) {
			b.WriteString(strconv.Quote(s))
			return
		}
	}
	b.WriteByte('\'')
	b.WriteString(s)
	b.WriteByte('\'')
}

// denial returns prefix + "tool " + quoteName(tool) + what.
func denial(prefix, tool, what string) string {
	var b strings.Builder
	b.Grow(len(prefix) + len(tool) + len(what) + 8)
	b.WriteString(prefix)
	b.WriteString("tool ")
	writeQuoted(&b, tool)
	b.WriteString(what)
	return b.String()
}
