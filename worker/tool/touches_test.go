package tool

import (
	"context"
	"strings"
	"testing"
)

type pasteArgs struct {
	Button string `json:"button"`
}

type otherArgs struct {
	Key string `json:"key"`
}

// TestDeclaredFactsReadTheDeclaredStruct: what a tool declares it touches from its
// arguments reads the struct the tool declares, checked at registration; the facts then
// read the values the worker decoded.
func TestDeclaredFactsReadTheDeclaredStruct(t *testing.T) {
	noop := func(context.Context, *Call) (*Result, error) { return &Result{}, nil }
	middle := PastesWhen(func(a *pasteArgs) bool { return a.Button == "middle" })
	plan := LaunchFrom(func(a *pasteArgs) (*LaunchPlan, error) { return &LaunchPlan{Argv: []string{"/bin/" + a.Button}}, nil })

	reg := NewRegistry()
	reg.Register(Tool{Name: "press", Args: NewArgs[pasteArgs], Touches: Touches{Pastes: middle, Launch: plan}, Handler: noop})
	if !middle(&pasteArgs{Button: "middle"}) || middle(&pasteArgs{Button: "left"}) || middle((*pasteArgs)(nil)) {
		t.Error("PastesWhen does not read the decoded struct")
	}
	if p, err := plan(&pasteArgs{Button: "true"}); err != nil || p.Argv[0] != "/bin/true" {
		t.Errorf("LaunchFrom = %+v, %v", p, err)
	}

	for _, tc := range []struct {
		name string
		tool Tool
		want string
	}{
		{"pastes without a struct", Tool{Name: "a", Touches: Touches{Pastes: middle}, Handler: noop}, "without an argument struct"},
		{"launch without a struct", Tool{Name: "b", Touches: Touches{Launch: plan}, Handler: noop}, "without an argument struct"},
		{"pastes reads another struct", Tool{Name: "c", Args: NewArgs[otherArgs], Touches: Touches{Pastes: middle}, Handler: noop}, "Touches.Pastes reads *tool.pasteArgs"},
		{"launch reads another struct", Tool{Name: "d", Args: NewArgs[otherArgs], Touches: Touches{Launch: plan}, Handler: noop}, "Touches.Launch reads *tool.pasteArgs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, tc.want) {
					t.Errorf("Register panicked with %q, want it to say %q", msg, tc.want)
				}
			}()
			NewRegistry().Register(tc.tool)
		})
	}
}
