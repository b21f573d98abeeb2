package contract

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// BootstrapPrefix starts the proxy's bootstrap line. The line is
//
//	cua-mcp-proxy/1 generation=<32 hex digits> version=<n>[ http-token=<token>]\n
//
// fields separated by exactly one space, in any order, each at most once. The fields are
// not secrets except the HTTP token, which is why it travels here rather than on the
// command line or in the environment (docs/adr/0002-proxy-start-order-and-bootstrap.md).
const BootstrapPrefix = "cua-mcp-proxy/1"

// Bootstrap is what the host tells the proxy once the proxy's session is bound: the
// host writes it with Encode, the proxy reads it with ParseBootstrap.
type Bootstrap struct {
	// Generation is the worker's GenerationLen-byte generation.
	Generation []byte
	// Version is the negotiated session protocol version.
	Version uint32
	// HTTPToken is the bearer token of the loopback HTTP transport; empty for stdio.
	HTTPToken string
}

// Encode returns the bootstrap line (see BootstrapPrefix), newline included. It refuses
// a generation of the wrong length, version 0 and a token with whitespace or control
// characters.
func (b Bootstrap) Encode() (string, error) {
	if len(b.Generation) != GenerationLen {
		return "", fmt.Errorf("generation is %d bytes, want %d", len(b.Generation), GenerationLen)
	}
	if b.Version == 0 {
		return "", errors.New("protocol version 0")
	}
	line := fmt.Sprintf("%s generation=%s version=%d", BootstrapPrefix, hex.EncodeToString(b.Generation), b.Version)
	if b.HTTPToken != "" {
		if !tokenSyntaxOK(b.HTTPToken) {
			return "", errors.New("HTTP token contains whitespace or control characters")
		}
		line += " http-token=" + b.HTTPToken
	}
	return line + "\n", nil
}

// ParseBootstrap parses a bootstrap line without its newline. It accepts exactly what
// Encode can produce: it checks the prefix, the field syntax, the generation's length and
// a positive version; a token is only checked for whitespace and control characters (the
// proxy applies its own length rule on top).
func ParseBootstrap(line string) (Bootstrap, error) {
	fields := strings.Split(line, " ")
	if len(fields) < 3 || fields[0] != BootstrapPrefix {
		return Bootstrap{}, fmt.Errorf("bootstrap line does not start with %q and two fields", BootstrapPrefix)
	}
	var b Bootstrap
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok || seen[k] {
			return Bootstrap{}, fmt.Errorf("bootstrap field %q is malformed or repeated", k)
		}
		seen[k] = true
		switch k {
		case "generation":
			g, err := hex.DecodeString(v)
			if err != nil || len(g) != GenerationLen {
				return Bootstrap{}, fmt.Errorf("bootstrap generation is not %d hex digits", 2*GenerationLen)
			}
			b.Generation = g
		case "version":
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil || n == 0 {
				return Bootstrap{}, errors.New("bootstrap version is not a positive number")
			}
			b.Version = uint32(n)
		case "http-token":
			if v == "" || !tokenSyntaxOK(v) {
				return Bootstrap{}, errors.New("bootstrap http-token is empty or contains control characters")
			}
			b.HTTPToken = v
		default:
			return Bootstrap{}, fmt.Errorf("bootstrap field %q is unknown", k)
		}
	}
	if b.Generation == nil || b.Version == 0 {
		return Bootstrap{}, errors.New("bootstrap lacks generation or version")
	}
	return b, nil
}

// tokenSyntaxOK reports whether tok has no whitespace and no control character.
func tokenSyntaxOK(tok string) bool {
	return strings.IndexFunc(tok, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) < 0
}
