package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/types"
)

const (
	// regoQuery is the rule a Rego policy must define, as a boolean.
	regoQuery = "data.cua.policy.allow"
	// regoServer is input.server for cua-host's own policies, and regoDriverServer for
	// policies written for the reference driver (serverFor).
	regoServer       = "cua-host"
	regoDriverServer = "cua-driver"
	// regoImplementation is input.implementation, whatever input.server says.
	regoImplementation = "cua-host"
	// regoLoadTimeout bounds compiling and the synthetic evaluation at load.
	regoLoadTimeout = 30 * time.Second
	// maxArgDepth bounds the nesting of arguments converted for Rego.
	maxArgDepth = 1000
)

// regoEvalTime is the clock every evaluation sees. No builtin that reads
// the clock is available to policies; fixing it keeps evaluation
// deterministic by construction.
var regoEvalTime = time.Unix(0, 0).UTC()

// regoPolicy is a compiled Rego policy: the allow query prepared once,
// immutable and safe for concurrent evaluation.
type regoPolicy struct {
	pq      rego.PreparedEvalQuery
	modules []string // "file.rego (package cua.policy)", in file order
	// server is input.server for this layer (serverFor).
	server string
}

// serverFor chooses input.server for a layer from its modules: "cua-driver" when a
// module holds the string "cua-driver" and none holds "cua-host" (a policy written for the
// reference driver, which tests input.server == "cua-driver"), else "cua-host". Either
// way input.implementation is "cua-host", so a policy can tell the two programs apart.
func serverFor(modules []*ast.Module) string {
	driver, host := false, false
	for _, m := range modules {
		ast.WalkTerms(m, func(t *ast.Term) bool {
			if s, ok := t.Value.(ast.String); ok {
				driver = driver || string(s) == regoDriverServer
				host = host || string(s) == regoServer
			}
			return false
		})
	}
	if driver && !host {
		return regoDriverServer
	}
	return regoServer
}

// regoCapabilities returns OPA's capabilities without any nondeterministic
// or network builtin (http.send, net.lookup_ip_addr, time.now_ns, rand.*,
// uuid.*, opa.runtime, io.jwt.*, …), without print and trace, and with no
// host allowed for network access. removed holds the names taken out.
func regoCapabilities() (caps *ast.Capabilities, removed map[string]bool) {
	caps = ast.CapabilitiesForThisVersion()
	removed = map[string]bool{}
	kept := make([]*ast.Builtin, 0, len(caps.Builtins))
	for _, b := range caps.Builtins {
		if b.Nondeterministic || b.Name == "print" || b.Name == "internal.print" ||
			b.Name == "trace" || strings.HasPrefix(b.Name, "io.jwt.") {
			removed[b.Name] = true
			continue
		}
		kept = append(kept, b)
	}
	caps.Builtins = kept
	caps.AllowNet = []string{}
	return caps, removed
}

// compileRego parses, compiles and checks the Rego modules in files (in
// order): data.cua.policy.allow must be defined, typed boolean by the type
// checker, and evaluate to a boolean or undefined for the synthetic input
// {"server":"cua-host","tool":"","arguments":{}} (server as serverFor chooses).
func compileRego(files []File) (*regoPolicy, error) {
	caps, removed := regoCapabilities()
	var comp *ast.Compiler
	opts := []func(*rego.Rego){
		rego.Query(regoQuery),
		rego.SetRegoVersion(ast.RegoV1),
		rego.Capabilities(caps),
		rego.Strict(true),
		rego.StrictBuiltinErrors(true),
		rego.EnablePrintStatements(true), // so a print call meets the capabilities check
		rego.CompilerHook(func(c *ast.Compiler) { comp = c }),
	}
	modules := make([]string, 0, len(files))
	var parsed []*ast.Module
	for _, f := range files {
		if len(bytes.TrimSpace(f.Data)) == 0 {
			return nil, invalidf("%s: empty Rego module (it needs a package declaration)", f.Name)
		}
		m, err := ast.ParseModuleWithOpts(f.Name, string(f.Data), ast.ParserOptions{
			RegoVersion:  ast.RegoV1,
			Capabilities: caps,
		})
		if err != nil {
			return nil, regoLoadError(err)
		}
		if m == nil {
			return nil, invalidf("%s: empty Rego module (it needs a package declaration)", f.Name)
		}
		if err := checkBuiltins(m, removed); err != nil {
			return nil, err
		}
		pkg := strings.TrimPrefix(m.Package.Path.String(), "data.")
		modules = append(modules, f.Name+" (package "+pkg+")")
		opts = append(opts, rego.ParsedModule(m))
		parsed = append(parsed, m)
	}

	ctx, cancel := context.WithTimeout(context.Background(), regoLoadTimeout)
	defer cancel()
	pq, err := rego.New(opts...).PrepareForEval(ctx)
	if err != nil {
		return nil, regoLoadError(err)
	}
	if comp == nil {
		return nil, invalidf("Rego compiler did not run")
	}
	ref := ast.MustParseRef(regoQuery)
	if len(comp.GetRulesExact(ref)) == 0 {
		return nil, invalidf("the policy defines no rule %s; write `package cua.policy` and a boolean `allow` rule", regoQuery)
	}
	if t := comp.TypeEnv.GetByRef(ref); t == nil || types.Compare(t, types.B) != 0 {
		return nil, invalidf("%s must be boolean, but the type checker infers %s; write `default allow := false` and `allow if { … }`",
			regoQuery, types.Sprint(t))
	}
	r := &regoPolicy{pq: pq, modules: modules, server: serverFor(parsed)}
	if _, err := r.eval(ctx, "", input{}); err != nil {
		return nil, &problem{
			msg:   fmt.Sprintf(`evaluating %s for the input {"server":%q,"tool":"","arguments":{}}: %v`, regoQuery, r.server, err),
			kind:  ErrInvalid,
			cause: err,
		}
	}
	return r, nil
}

// checkBuiltins rejects calls to removed builtins with a message that says
// why, before the compiler reports them as undefined functions.
func checkBuiltins(m *ast.Module, removed map[string]bool) error {
	var found error
	report := func(op ast.Ref, loc *ast.Location) {
		name := op.String()
		if found != nil || !removed[name] {
			return
		}
		where := ""
		if loc != nil {
			where = fmt.Sprintf("%s:%d: ", loc.File, loc.Row)
		}
		found = invalidf("%s%s is not available to cua-host policies (nondeterministic and network builtins, print and trace are disabled)", where, name)
	}
	ast.NewGenericVisitor(func(x any) bool {
		switch x := x.(type) {
		case *ast.Expr:
			if x.IsCall() {
				report(x.Operator(), x.Location)
			}
		case *ast.Term:
			if c, ok := x.Value.(ast.Call); ok && len(c) > 0 {
				if op, ok := c[0].Value.(ast.Ref); ok {
					report(op, x.Location)
				}
			}
		}
		return found != nil
	}).Walk(m)
	return found
}

// regoLoadError turns OPA's parse and compile errors into one single-line
// ErrInvalid error listing "file:row: code: message" for each.
func regoLoadError(err error) error {
	var astErrs ast.Errors
	if errors.As(err, &astErrs) && len(astErrs) > 0 {
		msgs := make([]string, len(astErrs))
		for i, e := range astErrs {
			msgs[i] = e.Code + ": " + oneLine(e.Message)
			if e.Location != nil {
				msgs[i] = fmt.Sprintf("%s:%d: %s", e.Location.File, e.Location.Row, msgs[i])
			}
		}
		return &problem{msg: strings.Join(msgs, "; "), kind: ErrInvalid, cause: err}
	}
	return &problem{msg: oneLine(err.Error()), kind: ErrInvalid, cause: err}
}

// oneLine joins a multi-line OPA message into one line: "values:\n  true at
// a:3\n  false at a:5" becomes "values: true at a:3; false at a:5".
func oneLine(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if i > 0 && b.Len() > 0 {
			if strings.HasSuffix(b.String(), ":") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(line)
	}
	return b.String()
}

// decide evaluates allow for the tool and the non-reserved arguments.
func (r *regoPolicy) decide(ctx context.Context, tool string, in input, denied string) (bool, string, error) {
	ok, err := r.eval(ctx, tool, in)
	if err != nil {
		return false, "", err
	}
	if !ok {
		return false, denial(denied, tool, " is not allowed by the Rego policy"), nil
	}
	return true, "", nil
}

// listed reports whether allow holds with no arguments.
func (r *regoPolicy) listed(ctx context.Context, tool string) bool {
	ok, err := r.eval(ctx, tool, input{})
	return err == nil && ok
}

// summary lists the modules and their packages.
func (r *regoPolicy) summary() string {
	return plural(len(r.modules), "module") + ": " + strings.Join(r.modules, ", ")
}

// eval runs the prepared query. Undefined is false; a result that is not a
// boolean is an ErrEvaluation error.
func (r *regoPolicy) eval(ctx context.Context, tool string, input input) (bool, error) {
	in, err := regoInput(r.server, tool, input)
	if err != nil {
		return false, &problem{msg: "arguments: " + err.Error(), kind: ErrEvaluation, cause: err}
	}
	if err := ctx.Err(); err != nil {
		return false, &problem{msg: err.Error(), kind: ErrEvaluation, cause: err}
	}
	rs, err := r.pq.Eval(ctx, rego.EvalParsedInput(in), rego.EvalTime(regoEvalTime), rego.EvalMetrics(metrics.NoOp()))
	if err != nil {
		return false, &problem{msg: oneLine(err.Error()), kind: ErrEvaluation, cause: err}
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return false, nil
	}
	v := rs[0].Expressions[0].Value
	b, ok := v.(bool)
	if !ok {
		return false, &problem{
			msg:  fmt.Sprintf("%s must evaluate to a boolean, got %s", regoQuery, jsonType(v)),
			kind: ErrEvaluation,
		}
	}
	return b, nil
}

// regoInput builds {"server":server,"implementation":"cua-host","tool":tool,
// "arguments":{…}}, leaving out reserved top-level arguments, plus "target":{…}
// when the call has a resolved target.
func regoInput(server, tool string, in input) (ast.Value, error) {
	kvs := make([][2]*ast.Term, 0, len(in.args))
	for k, v := range in.args {
		if Reserved(k) {
			continue
		}
		val, err := regoValue(v, 0)
		if err != nil {
			return nil, fmt.Errorf("argument %s: %w", quoteName(k), err)
		}
		kvs = append(kvs, [2]*ast.Term{ast.StringTerm(k), ast.NewTerm(val)})
	}
	top := [][2]*ast.Term{
		{ast.StringTerm("server"), ast.StringTerm(server)},
		{ast.StringTerm("implementation"), ast.StringTerm(regoImplementation)},
		{ast.StringTerm("tool"), ast.StringTerm(tool)},
		{ast.StringTerm("arguments"), ast.NewTerm(ast.NewObject(kvs...))},
	}
	if in.hasTarget {
		t, err := regoValue(in.target.fields(), 0)
		if err != nil {
			return nil, fmt.Errorf("target: %w", err)
		}
		top = append(top, [2]*ast.Term{ast.StringTerm("target"), ast.NewTerm(t)})
	}
	return ast.NewObject(top...), nil
}

// regoValue converts a JSON-compatible Go value to a Rego value, rejecting
// numbers JSON cannot hold and nesting deeper than maxArgDepth.
func regoValue(v any, depth int) (ast.Value, error) {
	if depth > maxArgDepth {
		return nil, errors.New("nested too deeply")
	}
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, errors.New("not a finite number")
		}
	case float32:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, errors.New("not a finite number")
		}
	case []any:
		terms := make([]*ast.Term, len(x))
		for i, e := range x {
			ev, err := regoValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			terms[i] = ast.NewTerm(ev)
		}
		return ast.NewArray(terms...), nil
	case map[string]any:
		kvs := make([][2]*ast.Term, 0, len(x))
		for k, e := range x {
			ev, err := regoValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			kvs = append(kvs, [2]*ast.Term{ast.StringTerm(k), ast.NewTerm(ev)})
		}
		return ast.NewObject(kvs...), nil
	}
	return ast.InterfaceToValue(v)
}

// jsonType names the JSON type of a value from a Rego result.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number, float64, int, int64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
