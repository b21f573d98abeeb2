package policy

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// constraint is one argument's checks in a YAML allow rule. At least one
// check is set; numeric (min, max) and string (max_length, pattern) checks
// are never mixed. Immutable after load.
type constraint struct {
	arg string // argument name; never reserved
	// target is set when the constraint names a field of the resolved target
	// ("target.pid"): arg is then the field name, read from input.target.
	target bool

	hasMin, hasMax bool
	min, max       float64 // finite; min <= max when both are set

	maxLength int            // in Unicode characters; -1 when unset
	pattern   *regexp.Regexp // unanchored RE2; nil when unset

	allowed []any // JSON-compatible values; nil when unset
}

// failure is why a constraint rejected an argument; pass is no failure.
type failure int

const (
	pass failure = iota
	failMissing
	failNotNumber
	failBelowMin
	failAboveMax
	failNotString
	failTooLong
	failNoMatch
	failNotAllowed
)

// numeric reports whether the constraint checks a number.
func (c *constraint) numeric() bool { return c.hasMin || c.hasMax }

// textual reports whether the constraint checks a string.
func (c *constraint) textual() bool { return c.maxLength >= 0 || c.pattern != nil }

// check runs the checks in order (presence, numeric, string, allowed) and
// returns the first failure. It does not allocate.
func (c *constraint) check(in input) failure {
	var v any
	var ok bool
	if c.target {
		v, ok = in.targetOrNil().field(c.arg)
	} else {
		v, ok = in.args[c.arg]
	}
	if !ok {
		return failMissing
	}
	if c.numeric() {
		f, ok := number(v)
		if !ok {
			return failNotNumber
		}
		if c.hasMin && !(f >= c.min) { // NaN fails too
			return failBelowMin
		}
		if c.hasMax && !(f <= c.max) {
			return failAboveMax
		}
	}
	if c.textual() {
		s, ok := v.(string)
		if !ok {
			return failNotString
		}
		if c.maxLength >= 0 && utf8.RuneCountInString(s) > c.maxLength {
			return failTooLong
		}
		if c.pattern != nil && !c.pattern.MatchString(s) {
			return failNoMatch
		}
	}
	if c.allowed != nil {
		for _, a := range c.allowed {
			if jsonEqual(a, v) {
				return pass
			}
		}
		return failNotAllowed
	}
	return pass
}

// writeMessage explains a failure of this constraint.
func (c *constraint) writeMessage(b *strings.Builder, f failure) {
	if c.target {
		if f == failMissing {
			b.WriteString("the call's target has no ")
			writeQuoted(b, c.arg)
			return
		}
		b.WriteString("target ")
		writeQuoted(b, c.arg)
	} else {
		if f == failMissing {
			b.WriteString("missing required argument ")
			writeQuoted(b, c.arg)
			return
		}
		b.WriteString("argument ")
		writeQuoted(b, c.arg)
	}
	switch f {
	case failNotNumber:
		b.WriteString(" must be a number")
	case failBelowMin:
		b.WriteString(" must be >= ")
		b.WriteString(formatNumber(c.min))
	case failAboveMax:
		b.WriteString(" must be <= ")
		b.WriteString(formatNumber(c.max))
	case failNotString:
		b.WriteString(" must be a string")
	case failTooLong:
		b.WriteString(" must be at most ")
		b.WriteString(strconv.Itoa(c.maxLength))
		b.WriteString(" characters")
	case failNoMatch:
		b.WriteString(" does not match the required pattern")
	case failNotAllowed:
		b.WriteString(" is not in the allowed values")
	}
}

// yamlRule is one allow rule: it passes when every constraint passes.
type yamlRule struct {
	line        int          // where the rule starts in the file
	constraints []constraint // sorted by argument name
}

// passes reports whether every constraint accepts args.
func (r *yamlRule) passes(in input) bool {
	for i := range r.constraints {
		if r.constraints[i].check(in) != pass {
			return false
		}
	}
	return true
}

// writeFailures writes the message of every failing constraint, in
// argument order, separated by ", ".
func (r *yamlRule) writeFailures(b *strings.Builder, in input) {
	first := true
	for i := range r.constraints {
		c := &r.constraints[i]
		if f := c.check(in); f != pass {
			if !first {
				b.WriteString(", ")
			}
			first = false
			c.writeMessage(b, f)
		}
	}
}
