package tool

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/cua-host/cua-host/authz"
)

// This file fills a handler's argument struct from the object the authorizer decoded
// (Call.Arguments) without parsing JSON again. The result is, by construction and by
// FuzzDecodeMatchesJSON, what encoding/json's strict decode of the object's encoding
// (json.Marshal of Arguments, which is Call.JSON) produces: the same fields set, the same
// acceptance, the same refusal messages. The decoded object carries numbers as float64,
// so a number reaches an integer field as the text json.Marshal writes for that float64
// ("1" for 1.0, "1e+21" for 1e21): what the policy saw is what the handler gets.
//
// Struct types outside what this file handles (nested structs, maps, pointers to
// composites, ",string" fields, custom unmarshalers other than json.RawMessage, float32,
// []byte, embedded pointers, names encoding/json and collectNames would see differently)
// take the JSON path: planFor returns nil and Decode marshals and decodes as before.

// argPlan is how to fill one struct type: its fields by exact JSON name.
type argPlan struct {
	// structName is the type's name as encoding/json reports it in errors.
	structName string
	fields     map[string]*argField
}

// argField is one field a JSON name reaches.
type argField struct {
	// index reaches the field through embedded (non-pointer) structs.
	index []int
	// path is the field as encoding/json names it in an UnmarshalTypeError: the Go names
	// of the embedded structs on the way, then the JSON name, joined by ".".
	path string
}

// plans caches planFor by struct type; a nil *argPlan means the type takes the JSON path.
var plans sync.Map // reflect.Type → *argPlan

var (
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// planFor returns the plan for struct type t, or nil when t takes the JSON path.
func planFor(t reflect.Type) *argPlan {
	if p, ok := plans.Load(t); ok {
		return p.(*argPlan)
	}
	p := buildPlan(t)
	plans.Store(t, p)
	return p
}

// candidate is a field typeFields-style resolution considers for a name.
type candidate struct {
	name   string
	tagged bool
	index  []int
	path   string
}

// embedded is an embedded struct to explore at the next depth.
type embedded struct {
	typ   reflect.Type
	index []int
	path  string
}

// buildPlan resolves t's fields as encoding/json's typeFields does (breadth first through
// embedded structs; at each name the shallowest field wins, a tagged one over untagged
// ones at the same depth, and a tie hides the name), or returns nil.
func buildPlan(t reflect.Type) *argPlan {
	byName := map[string][]candidate{}
	visited := map[reflect.Type]bool{}
	next := []embedded{{typ: t}}
	count := map[reflect.Type]int{}
	for len(next) > 0 {
		current := next
		next = nil
		levelCount := count
		count = map[reflect.Type]int{}
		for _, e := range current {
			if visited[e.typ] {
				continue
			}
			visited[e.typ] = true
			for i := 0; i < e.typ.NumField(); i++ {
				sf := e.typ.Field(i)
				if sf.Anonymous {
					ft := sf.Type
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !plainName(name) {
					return nil // encoding/json's own validity rules would apply
				}
				for opt := range strings.SplitSeq(opts, ",") {
					if opt == "string" {
						return nil
					}
				}
				index := append(append(make([]int, 0, len(e.index)+1), e.index...), i)
				if name == "" && sf.Anonymous && sf.Type.Kind() == reflect.Struct {
					count[sf.Type]++
					if count[sf.Type] == 1 {
						next = append(next, embedded{typ: sf.Type, index: index, path: e.path + sf.Name + "."})
					}
					continue
				}
				if sf.Anonymous && name == "" && sf.Type.Kind() == reflect.Pointer {
					return nil // embedded pointer: encoding/json allocates through it
				}
				if !supported(sf.Type) {
					return nil
				}
				c := candidate{name: name, tagged: name != "", index: index}
				if c.name == "" {
					c.name = sf.Name
				}
				c.path = e.path + c.name
				byName[c.name] = append(byName[c.name], c)
				if levelCount[e.typ] > 1 {
					byName[c.name] = append(byName[c.name], c) // the same struct embedded twice
				}
			}
		}
	}
	p := &argPlan{structName: t.Name(), fields: map[string]*argField{}}
	for name, cs := range byName {
		if c, ok := dominant(cs); ok {
			p.fields[name] = &argField{index: c.index, path: c.path}
		}
	}
	// Decode refuses a name outside collectNames before it decodes anything (as
	// decodeArgs does); a type where that set differs from encoding/json's takes the
	// JSON path so that both checks keep their exact effect.
	names := map[string]bool{}
	collectNames(t, names)
	if len(names) != len(p.fields) {
		return nil
	}
	for name := range names {
		if p.fields[name] == nil {
			return nil
		}
	}
	return p
}

// dominant picks the field a name reaches among cs, as encoding/json does.
func dominant(cs []candidate) (candidate, bool) {
	depth := len(cs[0].index)
	for _, c := range cs[1:] {
		depth = min(depth, len(c.index))
	}
	var best []candidate
	for _, c := range cs {
		if len(c.index) == depth {
			best = append(best, c)
		}
	}
	if len(best) == 1 {
		return best[0], true
	}
	var tagged []candidate
	for _, c := range best {
		if c.tagged {
			tagged = append(tagged, c)
		}
	}
	if len(tagged) == 1 {
		return tagged[0], true
	}
	return candidate{}, false
}

// plainName reports whether a tag name is empty or only ASCII letters, digits and
// underscores (a subset of what encoding/json accepts as a name).
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// supported reports whether a field of type t is filled here: a scalar, a pointer to a
// scalar, a slice of scalars or of any, any, or json.RawMessage.
func supported(t reflect.Type) bool {
	if t == rawMessageType {
		return true
	}
	switch t.Kind() {
	case reflect.Pointer:
		return t.Name() == "" && scalar(t.Elem())
	case reflect.Slice:
		e := t.Elem()
		if hasUnmarshaler(t) || e.Kind() == reflect.Uint8 {
			return false
		}
		return scalar(e) || emptyInterface(e)
	case reflect.Interface:
		return emptyInterface(t)
	}
	return scalar(t)
}

// scalar reports whether t is a bool, string, integer or float64 without custom
// unmarshaling.
func scalar(t reflect.Type) bool {
	if hasUnmarshaler(t) {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

func emptyInterface(t reflect.Type) bool {
	return t.Kind() == reflect.Interface && t.NumMethod() == 0
}

func hasUnmarshaler(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(unmarshalerType) || p.Implements(unmarshalerType) ||
		t.Implements(textUnmarshalerType) || p.Implements(textUnmarshalerType)
}

// decodeObject fills v (a pointer to a struct) from args. It reports false, having
// changed nothing, when v's type or a value in args takes the JSON path instead.
func decodeObject(args map[string]any, v any) (bool, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return false, nil
	}
	p := planFor(rv.Elem().Type())
	if p == nil || !rv.Elem().IsZero() {
		// A struct that already holds values keeps encoding/json's exact reuse of them.
		return false, nil
	}
	unknown, anyUnknown := "", false
	for k, x := range args {
		if !decodedJSON(x) {
			return false, nil
		}
		if p.fields[k] == nil && (!anyUnknown || k < unknown) {
			unknown, anyUnknown = k, true
		}
	}
	// Every known field is filled, even when the call is refused: the worker reads the
	// target from a struct whose other arguments do not decode (the refusal is the
	// handler's to report). A field whose value does not fit is left zero.
	s := rv.Elem()
	// encoding/json reports the first error in the encoding, whose keys are sorted.
	var first *json.UnmarshalTypeError
	firstKey := ""
	for k, x := range args {
		f := p.fields[k]
		if f == nil {
			continue
		}
		field := s.FieldByIndex(f.index)
		if te := store(field, x); te != nil {
			field.SetZero()
			if first == nil || k < firstKey {
				te.Struct, te.Field = p.structName, f.path
				first, firstKey = te, k
			}
		}
	}
	if anyUnknown {
		return true, authz.Refuse(authz.CodeInvalidArguments, "unknown argument %q", unknown)
	}
	if first != nil {
		return true, authz.Refuse(authz.CodeInvalidArguments, "%s", describeJSONError(first))
	}
	return true, nil
}

// decodedJSON reports whether x is what encoding/json decodes into any: nil, bool, a
// finite float64, string, []any or map[string]any of such values.
func decodedJSON(x any) bool {
	switch x := x.(type) {
	case nil, bool, string:
		return true
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case []any:
		for _, e := range x {
			if !decodedJSON(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !decodedJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}

// store sets v (a field of a supported type) from the decoded value x as encoding/json
// would from x's encoding, or returns the type error it would report (Field unset).
func store(v reflect.Value, x any) *json.UnmarshalTypeError {
	if v.Type() == rawMessageType {
		b, _ := json.Marshal(x) // cannot fail: decodedJSON holds
		v.SetBytes(b)
		return nil
	}
	if x == nil {
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer, reflect.Slice:
			v.SetZero()
		}
		return nil // null leaves anything else unchanged
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	switch x := x.(type) {
	case bool:
		switch v.Kind() {
		case reflect.Bool:
			v.SetBool(x)
		case reflect.Interface:
			v.Set(reflect.ValueOf(x))
		default:
			return typeError("bool", v.Type())
		}
	case string:
		switch v.Kind() {
		case reflect.String:
			v.SetString(x)
		case reflect.Interface:
			v.Set(reflect.ValueOf(x))
		default:
			return typeError("string", v.Type())
		}
	case float64:
		return storeNumber(v, x)
	case []any:
		switch v.Kind() {
		case reflect.Interface:
			v.Set(reflect.ValueOf(copyJSON(x)))
		case reflect.Slice:
			s := reflect.MakeSlice(v.Type(), len(x), len(x))
			var first *json.UnmarshalTypeError
			for i, e := range x {
				if te := store(s.Index(i), e); te != nil && first == nil {
					first = te
				}
			}
			v.Set(s)
			return first
		default:
			return typeError("array", v.Type())
		}
	case map[string]any:
		if v.Kind() == reflect.Interface {
			v.Set(reflect.ValueOf(copyJSON(x)))
			return nil
		}
		return typeError("object", v.Type())
	}
	return nil
}

// storeNumber sets v from f as encoding/json sets it from json.Marshal(f).
func storeNumber(v reflect.Value, f float64) *json.UnmarshalTypeError {
	switch v.Kind() {
	case reflect.Interface:
		v.Set(reflect.ValueOf(f))
	case reflect.Float64:
		v.SetFloat(f)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := intOf(f)
		if !ok || v.OverflowInt(n) {
			return typeError("number "+numberText(f), v.Type())
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, ok := uintOf(f)
		if !ok || v.OverflowUint(n) {
			return typeError("number "+numberText(f), v.Type())
		}
		v.SetUint(n)
	default:
		return typeError("number", v.Type())
	}
	return nil
}

// exact is the bound below which json.Marshal writes an integral float64 as exactly its
// integer digits; above it the shortest round-tripping digits end in zeros.
const exact = 1 << 53

// intOf is strconv.ParseInt of json.Marshal(f).
func intOf(f float64) (int64, bool) {
	if f != math.Trunc(f) {
		return 0, false
	}
	if -exact < f && f < exact {
		return int64(f), true
	}
	n, err := strconv.ParseInt(numberText(f), 10, 64)
	return n, err == nil
}

// uintOf is strconv.ParseUint of json.Marshal(f); "-0" is not unsigned.
func uintOf(f float64) (uint64, bool) {
	if f != math.Trunc(f) || f < 0 || math.Signbit(f) {
		return 0, false
	}
	if f < exact {
		return uint64(f), true
	}
	n, err := strconv.ParseUint(numberText(f), 10, 64)
	return n, err == nil
}

// numberText is the JSON text json.Marshal writes for f.
func numberText(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

func typeError(value string, t reflect.Type) *json.UnmarshalTypeError {
	return &json.UnmarshalTypeError{Value: value, Type: t}
}

// copyJSON copies the arrays and objects of a decoded value, so that a handler that
// changes what it decoded into an any never changes Call.Arguments.
func copyJSON(x any) any {
	switch x := x.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyJSON(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyJSON(e)
		}
		return out
	}
	return x
}
