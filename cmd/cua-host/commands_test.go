package main

import (
	"bytes"
	"context"
	"flag"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/cua-host/cua-host/proto/contract"
)

// TestUsageListsCommands: `cua-host help` shows every command main dispatches except the
// hidden entry points, each of which is dispatched and named in the package
// documentation, and the documentation's list of commands is the table's.
func TestUsageListsCommands(t *testing.T) {
	var help bytes.Buffer
	if code := run(context.Background(), []string{"help"}, &help, &bytes.Buffer{}); code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	doc := packageDoc(t)
	seen := map[string]bool{}
	for _, c := range commands {
		for _, n := range c.names {
			if seen[n] {
				t.Errorf("%q selects two commands", n)
			}
			seen[n] = true
			if got, ok := lookupCommand(n); !ok || got.names[0] != c.names[0] {
				t.Errorf("%q does not dispatch to %q", n, c.names[0])
			}
		}
		name := c.names[0]
		if c.hidden() {
			if !strings.Contains(doc, "`"+name+"`") || strings.Contains(help.String(), name) || c.run == nil {
				t.Errorf("hidden %q: named in the documentation %v, in the help %v, runs %v", name,
					strings.Contains(doc, "`"+name+"`"), strings.Contains(help.String(), name), c.run != nil)
			}
			continue
		}
		if !strings.Contains(help.String(), "\n  cua-host "+name+" ") && !strings.Contains(help.String(), "\n  cua-host "+name+"\n") {
			t.Errorf("help does not list %q:\n%s", name, help.String())
		}
		if len(c.synopsis) == 0 {
			t.Errorf("%q has no line in the package documentation", name)
		}
	}
	for _, hidden := range []string{contract.WorkerSubcommand, contract.ProxySubcommand, contract.JanitorSubcommand} {
		if c, ok := lookupCommand(hidden); !ok || !c.hidden() {
			t.Errorf("the hidden entry point %q is not dispatched as one", hidden)
		}
	}
	var listed []string
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "\tcua-host ") {
			listed = append(listed, strings.Join(strings.Fields(line), " "))
		}
	}
	var want []string
	for _, line := range synopsis() {
		want = append(want, strings.Join(strings.Fields(line), " "))
	}
	if strings.Join(listed, "\n") != strings.Join(want, "\n") {
		t.Errorf("the package documentation lists\n%s\nthe commands table says\n%s", strings.Join(listed, "\n"), strings.Join(want, "\n"))
	}
}

// TestUsageConsentValues: the help offers every --consent value the flag accepts, and the
// flag accepts no other.
func TestUsageConsentValues(t *testing.T) {
	var help bytes.Buffer
	usage(&help)
	if want := "--consent " + strings.Join(consentProviders, "|") + "]"; !strings.Contains(help.String(), want) {
		t.Errorf("help lacks %q", want)
	}
	for _, v := range append([]string{"bogus"}, consentProviders...) {
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		f := addSessionFlags(fs)
		if err := fs.Parse([]string{"--consent", v}); err != nil {
			t.Fatal(err)
		}
		_, err := f.resolve("cli", func(string) string { return "" })
		refused := err != nil && strings.Contains(err.Error(), "--consent")
		if refused != (v == "bogus") {
			t.Errorf("--consent %s: %v", v, err)
		}
		if refused && !strings.Contains(err.Error(), "want dialog, tty or deny") {
			t.Errorf("--consent %s: %v does not name the values", v, err)
		}
	}
}

// packageDoc returns main.go's package documentation.
func packageDoc(t *testing.T) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	return f.Doc.Text()
}
