package tool

import (
	"bytes"
	"encoding/json"
	"fmt"

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
	// IsError marks a tool-level failure that happened after the tool started.
	IsError bool
}

// TextResult returns a result with one text block and a structured value.
func TextResult(text string, structured any) *Result {
	return &Result{Content: []Content{Text(text)}, Structured: structured}
}

// DecodeArgs unmarshals a JSON object of arguments into v strictly: unknown fields, trailing
// data and non-objects are an invalid_arguments refusal.
func DecodeArgs(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
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
