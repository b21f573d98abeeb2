package authz_test

import (
	"maps"
	"reflect"
	"testing"

	"github.com/cua-host/cua-host/authz"
)

func TestSanitize(t *testing.T) {
	nested := map[string]any{"_keep": 1.0}
	tests := []struct {
		name     string
		tool     string
		args     map[string]any
		wantTool string
		want     map[string]any
	}{
		{name: "nil arguments", tool: "click", wantTool: "click", want: map[string]any{}},
		{name: "nothing to drop", tool: "click", args: map[string]any{"x": 1.0, "y": 2.0}, wantTool: "click", want: map[string]any{"x": 1.0, "y": 2.0}},
		{name: "drops reserved keys", tool: "click", args: map[string]any{"x": 1.0, "_session": "s", "_": true, "__proto__": map[string]any{}}, wantTool: "click", want: map[string]any{"x": 1.0}},
		{name: "only top level", tool: "set_value", args: map[string]any{"value": nested}, wantTool: "set_value", want: map[string]any{"value": map[string]any{"_keep": 1.0}}},
		{name: "underscore inside a key stays", tool: "click", args: map[string]any{"window_id": 3.0, "x_": 1.0}, wantTool: "click", want: map[string]any{"window_id": 3.0, "x_": 1.0}},
		{name: "alias", tool: "type_text_chars", args: map[string]any{"text": "hi"}, wantTool: "type_text", want: map[string]any{"text": "hi"}},
		{name: "canonical name unchanged", tool: "type_text", wantTool: "type_text", want: map[string]any{}},
		{name: "only an exact alias", tool: "Type_Text_Chars", wantTool: "Type_Text_Chars", want: map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := maps.Clone(tt.args)
			tool, clean := authz.Sanitize(tt.tool, tt.args)
			if tool != tt.wantTool || !reflect.DeepEqual(clean, tt.want) {
				t.Errorf("Sanitize(%s, %v) = %s, %v, want %s, %v", tt.tool, tt.args, tool, clean, tt.wantTool, tt.want)
			}
			if !reflect.DeepEqual(tt.args, before) {
				t.Errorf("Sanitize() changed its input to %v, want %v", tt.args, before)
			}
			if clean == nil {
				t.Errorf("Sanitize() = nil map, want an empty map")
			}
			clean["added"] = 1
			if _, ok := tt.args["added"]; ok {
				t.Errorf("Sanitize() returned its input map, want a copy")
			}
		})
	}
}
