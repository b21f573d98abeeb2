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

type openLabel struct {
	Session *string `json:"session"`
}

func (openLabel) OpenArguments() {}

// TestOpenArgumentsIgnoreWhatTheyDoNotName: an Open struct takes the arguments it names,
// strictly, and drops the others; a struct that is not Open refuses them.
func TestOpenArgumentsIgnoreWhatTheyDoNotName(t *testing.T) {
	open := Tool{Name: "open", Args: NewArgs[openLabel]}
	v, err := open.DecodeArguments(map[string]any{"session": "s1", "extra": 1.0})
	if a, ok := v.(*openLabel); err != nil || !ok || a.Session == nil || *a.Session != "s1" {
		t.Fatalf("open decode = %+v, %v; want session s1 and the extra argument ignored", v, err)
	}
	if _, err := open.DecodeArguments(map[string]any{"session": 5.0, "extra": 1.0}); err == nil || !strings.Contains(err.Error(), `"session"`) {
		t.Errorf("open decode of a numeric session = %v, want the strict decode's refusal of session", err)
	}
	// A handler called without the worker's decode reads the JSON the same way.
	c := &Call{Name: "open", JSON: []byte(`{"session":"s2","other":[1]}`)}
	if a, err := ArgsOf[openLabel](c); err != nil || a.Session == nil || *a.Session != "s2" {
		t.Errorf("ArgsOf from JSON = %+v, %v", a, err)
	}
	strict := Tool{Name: "strict", Args: NewArgs[otherArgs]}
	if _, err := strict.DecodeArguments(map[string]any{"key": "a", "extra": 1.0}); err == nil || !strings.HasSuffix(err.Error(), `unknown argument "extra"`) {
		t.Errorf("strict decode = %v, want unknown argument \"extra\"", err)
	}
}
