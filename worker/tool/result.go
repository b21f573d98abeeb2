package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/cua-host/cua-host/authz"
)

// Content is one block of a result: text, or an encoded image.
type Content struct {
	Text     string
	Image    []byte
	MIMEType string
}

// Text returns a text block.
func Text(s string) Content { return Content{Text: s} }

// Image returns an image block.
func Image(data []byte, mimeType string) Content { return Content{Image: data, MIMEType: mimeType} }

// IsImage reports whether c is an image block.
func (c Content) IsImage() bool { return c.Image != nil }

// Result is what a tool produced.
type Result struct {
	Content []Content
	// Structured is marshalled to a JSON object for structuredContent; nil means none.
	Structured any
	// Details is cua-host's own account of the call beyond Structured (what it read back,
	// the devices and windows involved), marshalled to a JSON object; nil means none. Over
	// MCP it travels in the result's _meta (docs/adr/0010), so that Structured can keep a
	// tool contract's closed shape.
	Details any
	// IsError marks a tool-level failure that happened after the tool started.
	IsError bool
}

// TextResult returns a result with one text block and a structured value.
func TextResult(text string, structured any) *Result {
	return &Result{Content: []Content{Text(text)}, Structured: structured}
}

// DecodeArgs unmarshals a JSON object of arguments into v (a pointer to a struct) strictly:
// unknown fields, names that match a field only after case folding, trailing data and
// non-objects are an invalid_arguments refusal.
func DecodeArgs(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var keys map[string]json.RawMessage
	if structType(v) != nil {
		if err := json.Unmarshal(args, &keys); err != nil {
			return authz.Refuse(authz.CodeInvalidArguments, "%s", describeJSONError(err))
		}
	}
	return decodeArgs(args, keysOf(keys), v)
}

// structType returns the struct type v points to, or nil.
func structType(v any) reflect.Type {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	return t
}

// keysOf returns the keys of an arguments object.
func keysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// decodeArgs is DecodeArgs for an object whose top-level keys are already known.
func decodeArgs(args json.RawMessage, keys []string, v any) error {
	if err := exactNames(keys, v); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return authz.Refuse(authz.CodeInvalidArguments, "%s", describeJSONError(err))
	}
	if dec.More() {
		return authz.Refuse(authz.CodeInvalidArguments, "trailing data after the arguments object")
	}
	return nil
}

func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if ok := asType(err, &te); ok {
		if te.Field != "" {
			return fmt.Sprintf("argument %q must be %s, not %s", te.Field, te.Type.String(), te.Value)
		}
		return fmt.Sprintf("arguments must be a JSON object, not %s", te.Value)
	}
	return "invalid arguments: " + err.Error()
}

func asType[T error](err error, target *T) bool {
	t, ok := err.(T)
	if ok {
		*target = t
	}
	return ok
}

// exactNames refuses an object with a key that is not exactly one of v's JSON field names:
// encoding/json would otherwise match it to a field case-insensitively.
func exactNames(keys []string, v any) error {
	t := structType(v)
	if t == nil {
		return nil
	}
	names := map[string]bool{}
	collectNames(t, names)
	for _, k := range keys {
		if !names[k] {
			return authz.Refuse(authz.CodeInvalidArguments, "unknown argument %q", k)
		}
	}
	return nil
}

// collectNames adds the JSON names of t's fields, following embedded structs.
func collectNames(t reflect.Type, names map[string]bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				collectNames(ft, names)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names[name] = true
	}
}
