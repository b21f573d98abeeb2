package authz

import (
	"fmt"
	"strings"
)

// Mode is a session's permission mode. The zero value is invalid.
type Mode int

// Session modes.
const (
	// Standard asks the host's consent provider before touching user-owned resources.
	Standard Mode = iota + 1
	// Bounded allows exactly what the session's manifest lists.
	Bounded
	// Unrestricted skips consent and nothing else.
	Unrestricted
)

// String returns the mode's name as the CLI spells it.
func (m Mode) String() string {
	switch m {
	case Standard:
		return "standard"
	case Bounded:
		return "bounded"
	case Unrestricted:
		return "unrestricted"
	default:
		return fmt.Sprintf("Mode(%d)", int(m))
	}
}

// ParseMode parses a mode name. It accepts the reference system's aliases
// ("autonomous" for bounded, "yolo" for unrestricted).
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "standard":
		return Standard, nil
	case "bounded", "autonomous":
		return Bounded, nil
	case "unrestricted", "yolo":
		return Unrestricted, nil
	}
	return 0, fmt.Errorf("unknown permission mode '%s'; expected standard, bounded, or unrestricted", s)
}
