package worker

import (
	"context"
	"go/parser"
	"go/token"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker/tool"
)

// declaredAuthorizer is an authorizer over a fake desktop for tools registered by test,
// each classified like the shipped tool named by like, and a standard session on it.
// Consent cannot be asked: a call that needs it is refused authorization_required.
func declaredAuthorizer(t *testing.T, like string, tools ...tool.Tool) (*authorizer, *session) {
	t.Helper()
	base, ok := authz.DefaultInventory().Lookup(like)
	if !ok {
		t.Fatalf("no inventory entry %s", like)
	}
	var entries []authz.Entry
	reg := tool.NewRegistry()
	for _, tl := range tools {
		e := *base
		e.Tool = tl.Name
		entries = append(entries, e)
		reg.Register(tl)
	}
	inv, err := authz.DefaultInventory().With(entries...)
	if err != nil {
		t.Fatal(err)
	}
	desk := &fakeDesktop{}
	cfg := Config{Now: time.Now, Logger: slog.New(slog.DiscardHandler)}
	a := &authorizer{now: time.Now, log: cfg.Logger, inventory: inv, pipe: authz.NewPipeline(nil, inv),
		res: &resolver{desk: desk, protect: newProtector(nil), selfPID: os.Getpid(), pinnable: map[string]bool{}}}
	a.bind(reg, desk)
	w := &worker{cfg: cfg, log: cfg.Logger, reg: reg, authorizer: a, stopping: true, consentWaiters: map[uint64]chan consentReply{}}
	now := time.Now()
	s := &session{w: w, label: "declared", state: tool.NewSession("declared", "standard"), lastActivity: now, asking: map[authz.GrantKey]*pendingConsent{},
		authority: &authz.Authority{Label: "declared", Mode: authz.Standard, Created: now, Expires: now.Add(time.Hour), IdleTTL: time.Hour}}
	return a, s
}

// TestATestToolIsDecidedOnWhatItDeclares: a tool registered here, in one declaration
// beside its handler, that writes the file its out_file argument names, has that file
// decided on (consent needed in standard mode; with a grant for exactly that file the
// call runs, and the handler gets the decided path). The same tool registered without
// the declaration is decided without the file: nothing outside the declaration knows it.
func TestATestToolIsDecidedOnWhatItDeclares(t *testing.T) {
	stamp := func(ctx context.Context, call *tool.Call) (*tool.Result, error) {
		f := call.File("out_file")
		if f == nil {
			return nil, authz.Refuse(authz.CodeInvalidArguments, "no decided out_file")
		}
		return tool.TextResult("stamped", nil), os.WriteFile(f.Path, []byte("stamped by "+call.Name), 0o600)
	}
	declared := tool.Tool{Name: "stamp_file", Handler: stamp,
		Touches: tool.Touches{Files: []tool.FileArg{{Arg: "out_file", Op: authz.OpWrite}}}}
	plain := tool.Tool{Name: "stamp_plain", Handler: stamp}
	a, s := declaredAuthorizer(t, "get_screen_size", declared, plain)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "stamp.txt")
	args := mustArgs(map[string]any{"out_file": dir + "//stamp.txt"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	_, _, r := a.authorize(ctx, s, newRequest("stamp_file", args))
	if r == nil || r.Code != authz.CodeAuthorizationRequired || !strings.Contains(r.Message, out) {
		t.Fatalf("stamp_file without a grant: %v, want authorization_required for %s", r, out)
	}
	now := time.Now()
	s.grants.Add(authz.Resource{Kind: authz.ResourceFile, Op: authz.OpWrite, Path: out}.Key(), now, now.Add(time.Hour))
	call, tl, r := a.authorize(ctx, s, newRequest("stamp_file", args))
	if r != nil {
		t.Fatalf("stamp_file with a grant for %s: %v", out, r)
	}
	if f := call.File("out_file"); f == nil || f.Path != out {
		t.Fatalf("stamp_file's decided file = %+v, want %s", f, out)
	}
	if _, err := tl.Handler(ctx, call); err != nil {
		t.Fatalf("stamp_file: %v", err)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "stamped by stamp_file" {
		t.Fatalf("%s holds %q (%v), want what stamp_file wrote", out, b, err)
	}

	call, _, r = a.authorize(ctx, s, newRequest("stamp_plain", mustArgs(map[string]any{"out_file": filepath.Join(dir, "other.txt")})))
	if r != nil || call.Files != nil {
		t.Fatalf("stamp_plain (declares no file): refusal %v, files %+v; want allowed with no file decided", r, call.Files)
	}
}

// TestToolFactsLiveInTheirDeclarations: the worker core names no shipped desktop tool.
// What a call of one touches (its window, paste keys, files, launch) is declared with the
// tool (tool.Tool.Touches) and read from the registry; a per-tool list in the core would
// name tools, and fails here. The journal's redaction of typed text is the one per-tool
// rule left in the core.
func TestToolFactsLiveInTheirDeclarations(t *testing.T) {
	builtin := tool.NewRegistry()
	(&worker{}).registerBuiltins(builtin)
	names := map[string]bool{}
	for _, tl := range Catalog() {
		if _, ok := builtin.Lookup(tl.Name); !ok {
			names[tl.Name] = true
		}
	}
	allowed := map[string]bool{"journal.go/type_text": true, "journal.go/clipboard_write": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/cua-host/cua-host/worker/desktop" && name != "backends.go" && name != "catalog.go" {
				t.Errorf("%s imports worker/desktop; only the registration (backends.go, catalog.go) may", name)
			}
		}
		for tn := range names {
			if strings.Contains(string(src), strconv.Quote(tn)) && !allowed[name+"/"+tn] {
				t.Errorf("%s names the tool %q: declare what its calls touch in its registration (tool.Touches)", name, tn)
			}
		}
	}
}

// openArgs is a test launching tool's argument struct.
type openArgs struct {
	Program string `json:"program"`
}

// TestALaunchIsPlannedFromTheDecodedStruct: a launching tool's plan reads the struct the
// worker decoded; arguments that struct does not take are refused invalid_arguments
// before anything is planned or asked, with the decode's own message.
func TestALaunchIsPlannedFromTheDecodedStruct(t *testing.T) {
	planned := 0
	open := tool.Tool{Name: "open_program", Args: tool.NewArgs[openArgs],
		Touches: tool.Touches{Launch: tool.LaunchFrom(func(a *openArgs) (*tool.LaunchPlan, error) {
			planned++
			return &tool.LaunchPlan{Argv: []string{a.Program}, Executable: a.Program}, nil
		})},
		Handler: func(ctx context.Context, call *tool.Call) (*tool.Result, error) { return &tool.Result{}, nil }}
	a, s := declaredAuthorizer(t, "launch_app", open)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	_, _, r := a.authorize(ctx, s, newRequest("open_program", mustArgs(map[string]any{"program": "/usr/bin/true", "colour": "red"})))
	if r == nil || r.Code != authz.CodeInvalidArguments || r.Message != `unknown argument "colour"` || planned != 0 {
		t.Fatalf("open_program with an unknown argument: %v (planned %d), want invalid_arguments before planning", r, planned)
	}
	_, _, r = a.authorize(ctx, s, newRequest("open_program", mustArgs(map[string]any{"program": "/usr/bin/true"})))
	if r == nil || r.Code != authz.CodeAuthorizationRequired || !strings.Contains(r.Message, "/usr/bin/true") || planned != 1 {
		t.Fatalf("open_program /usr/bin/true in standard mode: %v (planned %d), want consent asked for exactly that program", r, planned)
	}
}
