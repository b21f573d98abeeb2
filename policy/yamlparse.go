package policy

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cua-host/cua-host/internal/strictyaml"
)

// The YAML schema is checked by walking the parsed node tree rather than by
// yaml's struct decoding: allow and deny each have two shapes (a mapping or
// a flat list), and yaml.Node.Decode, which a custom unmarshaler would need,
// drops Decoder.KnownFields. Walking the nodes rejects unknown and
// duplicate keys at every level and reports each problem with its line.

// Keys accepted in each mapping of a YAML policy.
var (
	policyKeys     = []string{"allow", "deny"}
	allowKeys      = []string{"tools", "rules"}
	denyKeys       = []string{"tools"}
	ruleKeys       = []string{"tool", "constraints"}
	constraintKeys = []string{"min", "max", "max_length", "pattern", "allowed"}
)

// maxValueDepth bounds the nesting of an allowed value.
const maxValueDepth = 64

// YAML core-schema tags.
const (
	tagNull      = "!!null"
	tagBool      = "!!bool"
	tagInt       = "!!int"
	tagFloat     = "!!float"
	tagStr       = "!!str"
	tagTimestamp = "!!timestamp"
)

// yamlParser walks one YAML policy file. Its walker resolves aliases and bounds
// the number of nodes visited, so aliases cannot make the walk much larger than
// the file.
type yamlParser struct {
	file string
	w    *strictyaml.Walker
	pol  *yamlPolicy
}

// parseYAML parses and validates one YAML policy file.
func parseYAML(file string, data []byte) (*yamlPolicy, error) {
	p := &yamlParser{
		file: file,
		pol: &yamlPolicy{
			deny:  map[string]bool{},
			allow: map[string]bool{},
			rules: map[string][]yamlRule{},
		},
	}
	p.w = strictyaml.New(strictyaml.Options{
		Aliases:     true,
		NullIsEmpty: true,
		Budget:      2*len(data) + 1024,
		Error:       p.problem,
	})
	root, err := p.w.Document(data)
	if err != nil {
		return nil, err
	}
	err = p.mapping(root, "the policy", policyKeys, func(key string, _, val *yaml.Node) error {
		if key == "allow" {
			return p.allow(val)
		}
		return p.deny(val)
	})
	if err != nil {
		return nil, err
	}
	return p.pol, nil
}

// problem words a structural problem of the file's YAML.
func (p *yamlParser) problem(pr *strictyaml.Problem) error {
	n, what := pr.Node, pr.Field
	switch pr.Kind {
	case strictyaml.KindSyntax:
		return &problem{msg: p.file + ": " + pr.Err.Error(), kind: ErrInvalid, cause: pr.Err}
	case strictyaml.KindEmpty:
		return invalidf("%s: empty YAML policy (write {} for a policy that allows nothing)", p.file)
	case strictyaml.KindSecondDocument:
		return p.errorf(n, "a policy file holds one YAML document; found a second one")
	case strictyaml.KindNotOneDocument:
		return p.errorf(n, "expected one YAML document")
	case strictyaml.KindTooComplex:
		return p.errorf(n, "policy too complex: too many YAML nodes after expanding aliases")
	case strictyaml.KindNotMapping:
		return p.errorf(n, "%s must be a mapping", what)
	case strictyaml.KindNotSequence:
		return p.errorf(n, "%s must be a list", what)
	case strictyaml.KindMergeKey:
		return p.errorf(n, "merge keys (<<) are not supported in %s", what)
	case strictyaml.KindKeyNotString:
		return p.errorf(n, "keys in %s must be strings", what)
	case strictyaml.KindDuplicateKey:
		return p.errorf(n, "duplicate key %s in %s (first at line %d)", quoteName(pr.Key), what, pr.FirstLine)
	case strictyaml.KindUnknownKey:
		return p.errorf(n, "unknown key %s in %s; expected %s", quoteName(pr.Key), what, strings.Join(pr.Keys, ", "))
	}
	return p.errorf(n, "%v in %s", pr.Kind, what)
}

// errorf returns an ErrInvalid problem located at n.
func (p *yamlParser) errorf(n *yaml.Node, format string, args ...any) error {
	return invalidf("%s: line %d: %s", p.file, n.Line, fmt.Sprintf(format, args...))
}

// node resolves an alias and charges the visit to the budget.
func (p *yamlParser) node(n *yaml.Node) (*yaml.Node, error) {
	return p.w.Node(n, "")
}

// isNull reports whether n is an explicit or empty null.
func isNull(n *yaml.Node) bool { return strictyaml.IsNull(n) }

// mapping calls fn for each entry of the mapping n in file order. A null n
// is an empty mapping. Keys must be unique strings; when keys is not nil,
// they must also be among keys. what names the mapping in messages.
func (p *yamlParser) mapping(n *yaml.Node, what string, keys []string, fn func(key string, k, v *yaml.Node) error) error {
	return p.w.Mapping(n, what, keys, fn)
}

// sequence calls fn for each item of the sequence n (aliases resolved). A
// null n is an empty sequence.
func (p *yamlParser) sequence(n *yaml.Node, what string, fn func(i int, item *yaml.Node) error) error {
	return p.w.Sequence(n, what, fn)
}

// allow parses allow: null, a mapping {tools, rules}, or a flat list mixing
// tool names and rules.
func (p *yamlParser) allow(n *yaml.Node) error {
	n, err := p.node(n)
	if err != nil {
		return err
	}
	if n.Kind == yaml.SequenceNode {
		return p.sequence(n, "allow", func(_ int, item *yaml.Node) error {
			if item.Kind == yaml.MappingNode {
				return p.rule(item)
			}
			return p.toolInto(item, "allow", p.pol.allow)
		})
	}
	if !isNull(n) && n.Kind != yaml.MappingNode {
		return p.errorf(n, "allow must be a mapping {tools, rules} or a list of tool names and rules")
	}
	return p.mapping(n, "allow", allowKeys, func(key string, _, val *yaml.Node) error {
		if key == "tools" {
			return p.sequence(val, "allow.tools", func(_ int, item *yaml.Node) error {
				return p.toolInto(item, "allow.tools", p.pol.allow)
			})
		}
		return p.sequence(val, "allow.rules", func(_ int, item *yaml.Node) error {
			return p.rule(item)
		})
	})
}

// deny parses deny: null, a mapping {tools}, or a flat list of tool names.
func (p *yamlParser) deny(n *yaml.Node) error {
	n, err := p.node(n)
	if err != nil {
		return err
	}
	names := func(list *yaml.Node, what string) error {
		return p.sequence(list, what, func(_ int, item *yaml.Node) error {
			return p.toolInto(item, what, p.pol.deny)
		})
	}
	if n.Kind == yaml.SequenceNode {
		return names(n, "deny")
	}
	if !isNull(n) && n.Kind != yaml.MappingNode {
		return p.errorf(n, "deny must be a mapping {tools} or a list of tool names")
	}
	return p.mapping(n, "deny", denyKeys, func(_ string, _, val *yaml.Node) error {
		return names(val, "deny.tools")
	})
}

// toolInto adds the tool name in n to set.
func (p *yamlParser) toolInto(n *yaml.Node, what string, set map[string]bool) error {
	name, err := p.toolName(n, what)
	if err != nil {
		return err
	}
	set[name] = true
	return nil
}

// toolName returns the canonical tool name in the scalar n.
func (p *yamlParser) toolName(n *yaml.Node, what string) (string, error) {
	if isNull(n) || (n.Kind == yaml.ScalarNode && n.Value == "") {
		if what == "allow rule" {
			return "", p.errorf(n, "YAML allow rule has an empty tool name")
		}
		return "", p.errorf(n, "YAML tool lists cannot contain an empty tool name (in %s)", what)
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != tagStr {
		return "", p.errorf(n, "tool names must be strings (in %s)", what)
	}
	if strings.TrimSpace(n.Value) != n.Value {
		return "", p.errorf(n, "tool name %s has leading or trailing spaces (in %s)", quoteName(n.Value), what)
	}
	return CanonicalTool(n.Value), nil
}

// rule parses one allow rule {tool, constraints}; n is already resolved.
func (p *yamlParser) rule(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return p.errorf(n, "allow rule must be a mapping {tool, constraints}")
	}
	var toolNode, consNode *yaml.Node
	err := p.mapping(n, "allow rule", ruleKeys, func(key string, _, val *yaml.Node) error {
		if key == "tool" {
			toolNode = val
		} else {
			consNode = val
		}
		return nil
	})
	if err != nil {
		return err
	}
	if toolNode == nil {
		return p.errorf(n, "YAML allow rule has no tool")
	}
	toolNode, err = p.node(toolNode)
	if err != nil {
		return err
	}
	tool, err := p.toolName(toolNode, "allow rule")
	if err != nil {
		return err
	}
	r := yamlRule{line: n.Line}
	if consNode != nil {
		what := "constraints for tool " + quoteName(tool)
		err = p.mapping(consNode, what, nil, func(arg string, k, v *yaml.Node) error {
			c, err := p.constraint(tool, arg, k, v)
			if err != nil {
				return err
			}
			r.constraints = append(r.constraints, c)
			return nil
		})
		if err != nil {
			return err
		}
	}
	slices.SortFunc(r.constraints, func(a, b constraint) int { return strings.Compare(a.arg, b.arg) })
	p.pol.rules[tool] = append(p.pol.rules[tool], r)
	return nil
}

// constraint parses the checks for one argument of a rule for tool.
func (p *yamlParser) constraint(tool, arg string, key, n *yaml.Node) (constraint, error) {
	c := constraint{arg: arg, maxLength: -1}
	where := quoteName(tool + "." + arg)
	bad := func(at *yaml.Node, format string, args ...any) error {
		return p.errorf(at, "invalid constraint for %s: %s", where, fmt.Sprintf(format, args...))
	}
	if arg == "" {
		return c, p.errorf(key, "constraints for tool %s name an empty argument", quoteName(tool))
	}
	if Reserved(arg) {
		return c, bad(key, "arguments starting with '_' are removed before policy evaluation, so this constraint could never pass")
	}
	if field, ok := strings.CutPrefix(arg, "target."); ok {
		if !slices.Contains(targetFields, field) {
			return c, bad(key, "the resolved target has no field %s (want one of %s)", quoteName(field), strings.Join(targetFields, ", "))
		}
		c.arg, c.target = field, true
	}
	n, err := p.node(n)
	if err != nil {
		return c, err
	}
	if n.Kind != yaml.MappingNode && !isNull(n) {
		return c, bad(n, "must be a mapping of checks (%s)", strings.Join(constraintKeys, ", "))
	}
	checks := 0
	err = p.mapping(n, "constraint for "+where, constraintKeys, func(k string, _, v *yaml.Node) error {
		checks++
		v, err := p.node(v)
		if err != nil {
			return err
		}
		switch k {
		case "min":
			c.hasMin = true
			c.min, err = p.number(v)
		case "max":
			c.hasMax = true
			c.max, err = p.number(v)
		case "max_length":
			c.maxLength, err = p.length(v)
		case "pattern":
			c.pattern, err = p.pattern(v)
		case "allowed":
			c.allowed, err = p.allowedValues(v)
		}
		if err != nil {
			return bad(v, "%s: %v", k, err)
		}
		return nil
	})
	if err != nil {
		return c, err
	}
	switch {
	case checks == 0:
		return c, bad(n, "constraint must define at least one check")
	case c.hasMin && c.hasMax && c.min > c.max:
		return c, bad(n, "min cannot be greater than max (%s > %s)", formatNumber(c.min), formatNumber(c.max))
	case c.numeric() && c.textual():
		return c, bad(n, "min/max need a number and max_length/pattern need a string; no value passes both")
	}
	return c, nil
}

// number parses a finite YAML number.
func (p *yamlParser) number(n *yaml.Node) (float64, error) {
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != tagInt && n.ShortTag() != tagFloat) {
		return 0, errors.New("must be a number")
	}
	var f float64
	if err := n.Decode(&f); err != nil {
		return 0, errors.New("must be a number")
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errors.New("must be a finite number")
	}
	return f, nil
}

// length parses a non-negative YAML integer.
func (p *yamlParser) length(n *yaml.Node) (int, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != tagInt {
		return 0, errors.New("must be a non-negative integer")
	}
	var v int64
	if err := n.Decode(&v); err != nil || v < 0 || v > math.MaxInt32 {
		return 0, errors.New("must be a non-negative integer")
	}
	return int(v), nil
}

// pattern compiles an RE2 regular expression (unanchored).
func (p *yamlParser) pattern(n *yaml.Node) (*regexp.Regexp, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != tagStr {
		return nil, errors.New("must be a string")
	}
	re, err := regexp.Compile(n.Value)
	if err != nil {
		return nil, fmt.Errorf("invalid regex pattern: %w", err)
	}
	return re, nil
}

// allowedValues parses a non-empty list of JSON-compatible values.
func (p *yamlParser) allowedValues(n *yaml.Node) ([]any, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, errors.New("must be a list of values")
	}
	if len(n.Content) == 0 {
		return nil, errors.New("must list at least one value")
	}
	out := make([]any, 0, len(n.Content))
	for _, item := range n.Content {
		v, err := p.value(item, 0)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// value converts a YAML node to a JSON-compatible value: nil, bool,
// float64, string, []any or map[string]any. Timestamps stay strings as
// written; other tags are rejected.
func (p *yamlParser) value(n *yaml.Node, depth int) (any, error) {
	if depth > maxValueDepth {
		return nil, errors.New("value nested too deeply")
	}
	n, err := p.node(n)
	if err != nil {
		return nil, err
	}
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case tagNull:
			return nil, nil
		case tagBool:
			var b bool
			if err := n.Decode(&b); err != nil {
				return nil, fmt.Errorf("line %d: not a boolean", n.Line)
			}
			return b, nil
		case tagInt, tagFloat:
			f, err := p.number(n)
			if err != nil {
				return nil, fmt.Errorf("line %d: value %s", n.Line, err)
			}
			return f, nil
		case tagStr, tagTimestamp:
			return n.Value, nil
		}
		return nil, fmt.Errorf("line %d: values with tag %s are not JSON values", n.Line, n.ShortTag())
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			v, err := p.value(item, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, err := p.node(n.Content[i])
			if err != nil {
				return nil, err
			}
			if k.Kind != yaml.ScalarNode || k.ShortTag() != tagStr {
				return nil, fmt.Errorf("line %d: object keys must be strings", k.Line)
			}
			if _, dup := out[k.Value]; dup {
				return nil, fmt.Errorf("line %d: duplicate key %s", k.Line, quoteName(k.Value))
			}
			v, err := p.value(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML value", n.Line)
}
