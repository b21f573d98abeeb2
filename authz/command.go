package authz

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// QuoteCommand renders argv as one shell-quoted line a person can read and paste: plain
// arguments as they are, others in single quotes, and any argument holding a control or
// non-printing character (a newline, an escape, a bidirectional override) in $'…' with
// every such character escaped, so the line shows exactly what runs and nothing can
// rewrite the text around it.
func QuoteCommand(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = quoteShell(a)
	}
	return strings.Join(out, " ")
}

func quoteShell(a string) string {
	if a == "" {
		return "''"
	}
	plain := true
	printable := true
	for _, r := range a {
		switch {
		case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r)):
		case r == utf8.RuneError || unicode.IsControl(r) || !unicode.IsPrint(r):
			plain, printable = false, false
		default:
			plain = false
		}
	}
	if plain {
		return a
	}
	if printable {
		return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i, w := 0, 0; i < len(a); i += w {
		r, size := utf8.DecodeRuneInString(a[i:])
		w = size
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, a[i])
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && (unicode.IsControl(r)):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r > 0xffff && (unicode.IsControl(r) || !unicode.IsPrint(r)):
			fmt.Fprintf(&b, `\U%08x`, r)
		case unicode.IsControl(r) || !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString("'")
	return b.String()
}
