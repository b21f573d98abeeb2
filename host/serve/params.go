package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/cua-host/cua-host/authz"
)

// createParams are create_session's parameters as sent.
type createParams struct {
	Label       string          `json:"label"`
	Mode        string          `json:"mode"`
	Manifest    string          `json:"manifest"`
	TTL         json.RawMessage `json:"ttl"`
	IdleTTL     json.RawMessage `json:"idle_ttl"`
	Display     string          `json:"display"`
	TrustDomain string          `json:"trust_domain"`
	HTTP        bool            `json:"http"`
	// DangerouslyBypassApprovals must be true with mode "unrestricted".
	DangerouslyBypassApprovals bool `json:"dangerously_bypass_approvals"`
	// Tools and ExcludeTools select the tools the session serves (authz.ToolSelection).
	Tools        []string `json:"tools"`
	ExcludeTools []string `json:"exclude_tools"`
}

// sessionRef names one session (revoke_session).
type sessionRef struct {
	Session string `json:"session"`
}

// decisionParams answer a consent_request (consent_decision).
type decisionParams struct {
	ID      *uint64         `json:"id"`
	Granted *bool           `json:"granted"`
	TTL     json.RawMessage `json:"ttl"`
}

// decodeParams decodes params (an object or nil) into v strictly: unknown members and
// members of the wrong type are CodeInvalidParams errors naming the member.
func decodeParams(params json.RawMessage, v any) *Error {
	if len(params) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(params)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return errorf(CodeInvalidParams, "invalid params: %q must be %s, got %s", te.Field, typeName(te.Type.Kind().String()), te.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return errorf(CodeInvalidParams, "invalid params: unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
		}
		return errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	return nil
}

func typeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "ptr":
		return "a value of another type"
	case "uint64", "int", "int64", "uint32":
		return "a non-negative integer"
	}
	return "a " + kind
}

// parseDuration reads a lifetime: a number of seconds or a Go duration string ("30m").
// Absent or null is zero.
func parseDuration(field string, raw json.RawMessage) (time.Duration, *Error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	switch jsonKind(raw) {
	case "number":
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || f < 1 || f > float64(maxTTL/time.Second) {
			return 0, errorf(CodeInvalidParams, "invalid params: %q must be a number of seconds in [1, %d] or a duration such as \"30m\", got %s", field, int(maxTTL/time.Second), raw)
		}
		return time.Duration(f * float64(time.Second)), nil
	case "string":
		var s string
		_ = json.Unmarshal(raw, &s)
		d, err := time.ParseDuration(s)
		if err != nil || d < time.Second || d > maxTTL {
			return 0, errorf(CodeInvalidParams, "invalid params: %q must be a duration in [1s, %v] such as \"30m\", got %q", field, maxTTL, s)
		}
		return d, nil
	}
	return 0, errorf(CodeInvalidParams, "invalid params: %q must be a number of seconds or a duration string, got %s", field, jsonKind(raw))
}

// maxTTL bounds a session's lifetime, as the command line does.
const maxTTL = 24 * time.Hour

// maxLabel bounds a label; it names the endpoint's socket file too.
const maxLabel = 64

// checkName validates a session label or trust domain name: 1–64 characters of letters,
// digits, '.', '_' and '-', not starting with '.' (it names files).
func checkName(field, s string) *Error {
	if s == "" || len(s) > maxLabel {
		return errorf(CodeInvalidParams, "invalid params: %q must be 1–%d characters, got %d", field, maxLabel, len(s))
	}
	if s[0] == '.' {
		return errorf(CodeInvalidParams, "invalid params: %q must not start with '.'", field)
	}
	for _, r := range s {
		if r > unicode.MaxASCII || !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_' || r == '-') {
			return errorf(CodeInvalidParams, "invalid params: %q may contain only ASCII letters, digits, '.', '_' and '-', got %q", field, s)
		}
	}
	return nil
}

// sessionSpec is a checked create_session request.
type sessionSpec struct {
	label    string
	domain   string
	mode     authz.Mode
	manifest []byte
	ttl      time.Duration
	idleTTL  time.Duration
	display  string // "private" or ":N"
	http     bool
	tools    authz.ToolSelection
}

// checkCreate validates create_session's parameters against the ceiling and reads an
// inline or named manifest. Nothing is started.
func checkCreate(p createParams, ceiling authz.Ceiling) (sessionSpec, *Error) {
	spec := sessionSpec{label: p.Label, domain: p.TrustDomain, display: p.Display, http: p.HTTP}
	if err := checkName("label", p.Label); err != nil {
		return spec, err
	}
	if spec.domain == "" {
		spec.domain = p.Label // a session of its own unless the app says otherwise
	} else if err := checkName("trust_domain", p.TrustDomain); err != nil {
		return spec, err
	}
	if p.Mode == "" {
		p.Mode = "standard"
	}
	mode, err := authz.ParseMode(p.Mode)
	if err != nil {
		return spec, errorf(CodeInvalidParams, "invalid params: \"mode\": %v", err)
	}
	spec.mode = mode
	switch {
	case mode == authz.Unrestricted && !p.DangerouslyBypassApprovals:
		return spec, errorf(CodeInvalidParams, "invalid params: \"mode\" unrestricted needs \"dangerously_bypass_approvals\": true")
	case p.DangerouslyBypassApprovals && mode != authz.Unrestricted:
		return spec, errorf(CodeInvalidParams, "invalid params: \"dangerously_bypass_approvals\" applies only to mode unrestricted")
	case mode == authz.Bounded && p.Manifest == "":
		return spec, errorf(CodeInvalidParams, "invalid params: \"manifest\" is required with mode bounded (inline YAML or a path)")
	case p.Manifest != "" && mode != authz.Bounded:
		return spec, errorf(CodeInvalidParams, "invalid params: \"manifest\" applies only to mode bounded")
	}
	if p.Tools != nil && len(p.Tools) == 0 {
		return spec, errorf(CodeInvalidParams, "invalid params: \"tools\" is empty; leave it out to serve every tool")
	}
	sel, err := authz.NewToolSelection(p.Tools, p.ExcludeTools, authz.DefaultInventory())
	var se *authz.SelectionError
	switch {
	case errors.As(err, &se):
		return spec, errorf(CodeInvalidParams, "invalid params: %q: %s", se.List, se.Reason)
	case err != nil:
		return spec, errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	spec.tools = sel
	if !slices.Contains(ceiling.AllowedModes, mode) {
		return spec, errorf(CodeRefused, "mode %s is outside this host's ceiling (serve --allow-modes)", mode)
	}
	switch {
	case spec.display == "":
		spec.display = "private"
	case spec.display == "private", spec.display == "nested":
	case len(spec.display) > 1 && spec.display[0] == ':' && isDisplayNumber(spec.display[1:]):
	default:
		return spec, errorf(CodeInvalidParams, "invalid params: \"display\" must be \"private\", \"nested\" or \":N\", got %q", p.Display)
	}
	var e *Error
	if spec.ttl, e = parseDuration("ttl", p.TTL); e != nil {
		return spec, e
	}
	if spec.idleTTL, e = parseDuration("idle_ttl", p.IdleTTL); e != nil {
		return spec, e
	}
	if spec.ttl == 0 {
		spec.ttl = ceiling.MaxSessionTTL
	}
	if spec.idleTTL == 0 {
		spec.idleTTL = min(ceiling.MaxIdleTTL, spec.ttl)
	}
	if spec.ttl > ceiling.MaxSessionTTL {
		return spec, errorf(CodeRefused, "\"ttl\" %v is above this host's maximum %v", spec.ttl, ceiling.MaxSessionTTL)
	}
	if spec.idleTTL > spec.ttl || spec.idleTTL > ceiling.MaxIdleTTL {
		return spec, errorf(CodeInvalidParams, "invalid params: \"idle_ttl\" %v must be at most \"ttl\" %v and this host's maximum %v", spec.idleTTL, spec.ttl, ceiling.MaxIdleTTL)
	}
	if p.Manifest != "" {
		if strings.Contains(p.Manifest, "\n") {
			spec.manifest = []byte(p.Manifest)
		} else {
			b, err := os.ReadFile(p.Manifest)
			if err != nil {
				return spec, errorf(CodeInvalidParams, "invalid params: \"manifest\" is a path (no newline) that cannot be read: %v", err)
			}
			spec.manifest = b
		}
		m, err := authz.ParseManifest(spec.manifest, authz.DefaultInventory())
		if err != nil {
			return spec, errorf(CodeInvalidParams, "invalid params: \"manifest\": %v", err)
		}
		spec.ttl, spec.idleTTL = min(spec.ttl, m.ExpiresAfter), min(spec.idleTTL, m.IdleTimeout)
	}
	return spec, nil
}

func isDisplayNumber(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && n < 1<<16 && fmt.Sprint(n) == s
}
