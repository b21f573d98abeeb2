package client

import (
	"encoding/json"
	"fmt"

	"github.com/cua-host/cua-host/proto/contract"
	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// Outcome says whether a call had an effect. The zero value is invalid.
type Outcome int

// Outcomes.
const (
	// NotStarted: provably no side effect.
	NotStarted Outcome = iota + 1
	// Completed: the tool ran to the end; its result may still be a tool-level error.
	Completed
	// Unknown: the effect may or may not have happened.
	Unknown
)

// String returns the outcome as the CLI prints it.
func (o Outcome) String() string {
	switch o {
	case NotStarted:
		return "not_started"
	case Completed:
		return "completed"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// MarshalText implements encoding.TextMarshaler.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Refusal is a refused call's stable code and message.
type Refusal struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Content is one block of a result: Type "text" with Text, or "image" with Data and MIMEType.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     []byte `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
}

// Result is a call's result. Outcome is always set, even when Call also returns an error.
type Result struct {
	Outcome    Outcome         `json:"outcome"`
	IsError    bool            `json:"is_error"`
	Refusal    *Refusal        `json:"refusal"`
	Content    []Content       `json:"content"`
	Structured json.RawMessage `json:"structured,omitempty"`
	// Details is the tool's own account of the call beyond Structured (a JSON object), or
	// nil. Structured may follow a closed contract shape (docs/adr/0010); Details never does.
	Details json.RawMessage `json:"details,omitempty"`
}

// Text joins the result's text blocks with newlines.
func (r Result) Text() string {
	s := ""
	for _, c := range r.Content {
		if c.Type == "text" {
			if s != "" {
				s += "\n"
			}
			s += c.Text
		}
	}
	return s
}

// ToolInfo describes a tool the session may call.
type ToolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema is the schema of every successful result's structured value, or nil.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
}

// Synthesized refusal codes, for outcomes decided on the caller's side; the values are
// the protocol's (package contract).
const (
	CodeWorkerUnavailable = contract.CodeWorkerUnavailable
	CodeDeadlineExceeded  = contract.CodeDeadlineExceeded
	CodeCanceled          = contract.CodeCanceled
	CodeInvalidRequest    = contract.CodeInvalidRequest
)

func notStarted(code, msg string) Result {
	return Result{Outcome: NotStarted, IsError: true, Refusal: &Refusal{Code: code, Message: msg},
		Content: []Content{{Type: "text", Text: code + ": " + msg}}}
}

func unknown(msg string) Result {
	return Result{Outcome: Unknown, IsError: true, Content: []Content{{Type: "text", Text: msg}}}
}

func resultFromProto(r *cuav1.ToolResult) (Result, error) {
	out := Result{IsError: r.GetIsError(), Structured: r.GetStructured(), Details: r.GetDetails()}
	switch r.GetOutcome() {
	case cuav1.Outcome_OUTCOME_NOT_STARTED:
		out.Outcome = NotStarted
	case cuav1.Outcome_OUTCOME_COMPLETED:
		out.Outcome = Completed
	case cuav1.Outcome_OUTCOME_UNKNOWN:
		out.Outcome = Unknown
	default:
		return unknown("worker sent a result without an outcome"), fmt.Errorf("result without outcome")
	}
	if ref := r.GetRefusal(); ref != nil {
		out.Refusal = &Refusal{Code: ref.GetCode(), Message: ref.GetMessage()}
	}
	for _, c := range r.GetContent() {
		switch k := c.GetKind().(type) {
		case *cuav1.Content_Text:
			out.Content = append(out.Content, Content{Type: "text", Text: k.Text})
		case *cuav1.Content_Image:
			out.Content = append(out.Content, Content{Type: "image", Data: k.Image.GetData(), MIMEType: k.Image.GetMimeType()})
		}
	}
	if len(out.Structured) > 0 && !json.Valid(out.Structured) {
		out.Structured = nil
		out.IsError = true
		out.Content = append(out.Content, Content{Type: "text", Text: "worker sent structured content that is not valid JSON"})
	}
	if len(out.Details) > 0 && !json.Valid(out.Details) {
		out.Details = nil
		out.Content = append(out.Content, Content{Type: "text", Text: "worker sent details that are not valid JSON"})
	}
	return out, nil
}
