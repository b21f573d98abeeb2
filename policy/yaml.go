package policy

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// yamlPolicy is a compiled YAML policy. Tool names are canonical.
// Immutable after parseYAML.
type yamlPolicy struct {
	deny  map[string]bool       // deny.tools
	allow map[string]bool       // allow.tools
	rules map[string][]yamlRule // allow.rules by tool, in file order
}

// decide evaluates deny.tools, then allow.tools, then the tool's rules.
func (y *yamlPolicy) decide(_ context.Context, tool string, in input, denied string) (bool, string, error) {
	if y.deny[tool] {
		return false, denial(denied, tool, " is explicitly denied"), nil
	}
	if y.allow[tool] {
		return true, "", nil
	}
	rules := y.rules[tool]
	if len(rules) == 0 {
		return false, denial(denied, tool, " is not allowed by the YAML policy"), nil
	}
	for i := range rules {
		if rules[i].passes(in) {
			return true, "", nil
		}
	}
	var b strings.Builder
	b.Grow(len(denied) + len(tool) + 128)
	b.WriteString(denied)
	b.WriteString("tool ")
	writeQuoted(&b, tool)
	b.WriteString(" argument constraints were not satisfied: ")
	for i := range rules {
		if i > 0 {
			b.WriteString("; ")
		}
		if len(rules) > 1 {
			b.WriteString("rule ")
			b.WriteString(strconv.Itoa(i + 1))
			b.WriteString(": ")
		}
		rules[i].writeFailures(&b, in)
	}
	return false, b.String(), nil
}

// listed reports whether the tool is not denied and is named in allow.tools
// or in a rule.
func (y *yamlPolicy) listed(_ context.Context, tool string) bool {
	return !y.deny[tool] && (y.allow[tool] || len(y.rules[tool]) > 0)
}

// summary counts the distinct tools in each list and the rules.
func (y *yamlPolicy) summary() string {
	n := 0
	for _, rs := range y.rules {
		n += len(rs)
	}
	return fmt.Sprintf("allow.tools: %s, deny.tools: %s, allow.rules: %s for %s",
		plural(len(y.allow), "tool"), plural(len(y.deny), "tool"), plural(n, "rule"), plural(len(y.rules), "tool"))
}

// plural returns "1 tool", "2 tools".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
