package mcpproxy

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cua-host/cua-host/client"
)

func TestForwardArgs(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr bool
	}{
		{name: "absent", in: "", want: "{}"},
		{name: "null", in: "null", want: "{}"},
		{name: "spaced null", in: " null\n", want: "{}"},
		{name: "empty object", in: "{}", want: "{}"},
		{name: "object", in: `{"x":1,"y":[2]}`, want: `{"x":1,"y":[2]}`},
		{name: "object with spaces", in: " {\"a\":\"b\"} ", want: `{"a":"b"}`},
		{name: "reserved key kept for the worker to drop", in: `{"_session":"x"}`, want: `{"_session":"x"}`},
		{name: "array", in: `[1,2]`, wantErr: true},
		{name: "string", in: `"x"`, wantErr: true},
		{name: "number", in: `3`, wantErr: true},
		{name: "true", in: `true`, wantErr: true},
		{name: "two objects", in: `{}{}`, wantErr: true},
		{name: "truncated", in: `{"a":`, wantErr: true},
		{name: "too large", in: `{"t":"` + strings.Repeat("a", MaxArgumentBytes) + `"}`, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ForwardArgs(json.RawMessage(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("ForwardArgs(%.40q) err = %v, wantErr %v", tc.in, err, tc.wantErr)
			}
			if err == nil && string(got) != tc.want {
				t.Errorf("ForwardArgs(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzForwardArgs: whatever an agent sends as arguments, ForwardArgs never panics, and what
// it forwards is exactly one JSON object (the worker's only accepted shape).
func FuzzForwardArgs(f *testing.F) {
	for _, s := range []string{"", "null", "{}", `{"x":1}`, "[1]", `"x"`, "{}{}", `{"a":`, " {\"_a\":null} ", "\xff", `{"a":"\ud800"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := ForwardArgs(in)
		if err != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil || m == nil {
			t.Fatalf("ForwardArgs(%q) = %q, which is not a JSON object: %v", in, out, err)
		}
	})
}

func TestToolResult(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	tests := []struct {
		name           string
		in             client.Result
		wantError      bool
		wantContent    []string // "text:…" or "image:mime:len"
		wantStructured string
		wantMeta       string
	}{
		{
			name:           "completed with fields",
			in:             client.Result{Outcome: client.Completed, Content: []client.Content{{Type: "text", Text: "(1, 2)"}}, Structured: json.RawMessage(`{"x":1,"y":2}`)},
			wantContent:    []string{"text:(1, 2)"},
			wantStructured: `{"x":1,"y":2}`,
			wantMeta:       `{"cua-host/outcome":"completed"}`,
		},
		{
			name: "image",
			in: client.Result{Outcome: client.Completed, Content: []client.Content{{Type: "text", Text: "shot"}, {Type: "image", Data: png, MIMEType: "image/png"}},
				Structured: json.RawMessage(`{"width":10}`)},
			wantContent:    []string{"text:shot", "image:image/png:12"},
			wantStructured: `{"width":10}`,
			wantMeta:       `{"cua-host/outcome":"completed"}`,
		},
		{
			name: "refusal from the worker",
			in: client.Result{Outcome: client.NotStarted, IsError: true, Refusal: &client.Refusal{Code: "permission_denied", Message: "denied by policy"},
				Content: []client.Content{{Type: "text", Text: "permission_denied: denied by policy"}}},
			wantError:      true,
			wantContent:    []string{"text:permission_denied: denied by policy"},
			wantStructured: `{"refusal":{"code":"permission_denied","message":"denied by policy"},"status":"refused"}`,
			wantMeta:       `{"cua-host/outcome":"not_started"}`,
		},
		{
			name:           "refusal without text gets its line",
			in:             client.Result{Outcome: client.NotStarted, Refusal: &client.Refusal{Code: "bounded_resource_outside_manifest", Message: "no"}},
			wantError:      true,
			wantContent:    []string{"text:bounded_resource_outside_manifest: no"},
			wantStructured: `{"refusal":{"code":"bounded_resource_outside_manifest","message":"no"},"status":"refused"}`,
			wantMeta:       `{"cua-host/outcome":"not_started"}`,
		},
		{
			name:           "the tool cannot override the outcome",
			in:             client.Result{Outcome: client.Unknown, IsError: true, Structured: json.RawMessage(`{"error":"x"}`), Details: json.RawMessage(`{"cua-host/outcome":"completed"}`)},
			wantError:      true,
			wantContent:    []string{},
			wantStructured: `{"error":"x"}`,
			wantMeta:       `{"cua-host/details":{"cua-host/outcome":"completed"},"cua-host/outcome":"unknown"}`,
		},
		{
			name:           "unset outcome is unknown",
			in:             client.Result{},
			wantContent:    []string{},
			wantStructured: `null`,
			wantMeta:       `{"cua-host/outcome":"unknown"}`,
		},
		{
			name:           "non-object structured kept under value",
			in:             client.Result{Outcome: client.Completed, Structured: json.RawMessage(`[1,2]`)},
			wantContent:    []string{},
			wantStructured: `{"value":[1,2]}`,
			wantMeta:       `{"cua-host/outcome":"completed"}`,
		},
		{
			name:           "invalid structured dropped",
			in:             client.Result{Outcome: client.Completed, Structured: json.RawMessage(`{`)},
			wantContent:    []string{},
			wantStructured: `{}`,
			wantMeta:       `{"cua-host/outcome":"completed"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ToolResult(tc.in)
			if got.IsError != tc.wantError {
				t.Errorf("IsError = %v, want %v", got.IsError, tc.wantError)
			}
			var content []string
			for _, c := range got.Content {
				switch c := c.(type) {
				case *mcp.TextContent:
					content = append(content, "text:"+c.Text)
				case *mcp.ImageContent:
					content = append(content, fmt.Sprintf("image:%s:%d", c.MIMEType, len(c.Data)))
				default:
					content = append(content, fmt.Sprintf("%T", c))
				}
			}
			if content == nil {
				content = []string{}
			}
			if !reflect.DeepEqual(content, tc.wantContent) {
				t.Errorf("content = %q, want %q", content, tc.wantContent)
			}
			b, err := json.Marshal(got.StructuredContent)
			if err != nil {
				t.Fatalf("marshal structuredContent: %v", err)
			}
			if string(b) != tc.wantStructured {
				t.Errorf("structuredContent = %s, want %s", b, tc.wantStructured)
			}
			if b, _ := json.Marshal(got.Meta); string(b) != tc.wantMeta {
				t.Errorf("_meta = %s, want %s", b, tc.wantMeta)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("the result does not marshal: %v", err)
			}
		})
	}
}

// FuzzToolResult: whatever the worker sends as structured content and text, the MCP
// result marshals, carries an outcome, and a refusal always shows up in text and in
// structuredContent.
func FuzzToolResult(f *testing.F) {
	f.Add([]byte(`{"x":1}`), "text", "", uint8(2))
	f.Add([]byte(`[1]`), "", "permission_denied", uint8(1))
	f.Add([]byte(`{`), "\xff", "c", uint8(0))
	f.Add([]byte(`{"outcome":"completed","refusal":null}`), "t", "", uint8(3))
	f.Fuzz(func(t *testing.T, structured []byte, text, code string, outcome uint8) {
		in := client.Result{Outcome: client.Outcome(outcome % 4), Structured: structured, Content: []client.Content{{Type: "text", Text: text}}}
		if code != "" {
			in.Refusal = &client.Refusal{Code: code, Message: "m"}
		}
		got := ToolResult(in)
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		var back struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
			Meta              map[string]any `json:"_meta"`
		}
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
		if back.Meta[MetaOutcome] != OutcomeName(in.Outcome) {
			t.Fatalf("outcome = %v, want %s", back.Meta[MetaOutcome], OutcomeName(in.Outcome))
		}
		if code != "" && (!back.IsError || back.StructuredContent["refusal"] == nil || back.StructuredContent["status"] != "refused") {
			t.Fatalf("refusal %q lost: %s", code, b)
		}
	})
}
