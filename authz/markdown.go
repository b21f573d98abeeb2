package authz

import (
	"bytes"
	"fmt"
	"strings"
)

//go:generate go test -run ^TestToolsDoc$ -update .

// Markdown renders the inventory as docs/tools.md: the generated reference of every tool,
// its risk class, resource, operation, state and behaviour per mode.
func (inv *Inventory) Markdown() []byte {
	var b bytes.Buffer
	b.WriteString(`# Tools

<!-- Generated from the inventory in authz/tools.go by ` + "`go generate ./authz`" + `. Do not edit:
a test fails when this file and the inventory disagree. ` + "`cua-host inventory --json`" + ` prints
the same table for scripts. -->

Every tool a cua-host worker can register has one reviewed entry in the inventory. The
worker's dispatch point classifies each call from it; a tool without an entry is refused
with ` + "`unclassified_tool`" + `, and tools/list offers only classified, exposed tools that the
policy (and, in bounded mode, the manifest) allows. The authorization model is described in
[security.md](security.md).

Columns:

- **class**: risk class. R0 reads nothing private and changes nothing; R1 acts (input,
  launching, window management, clipboard writes); R2 observes private state (window
  lists, regions, the clipboard, accessibility trees); R3 observes whole windows or the whole
  display, or terminates processes.
- **resource / operation**: what the call touches and what it does to it. Consent grants
  are scoped to exactly one resource and one operation class (observe, input, terminate).
- **arguments**: which arguments name the resource; the worker resolves them (window owner
  pid from the X server, executable from /proc/PID/exe) before deciding.
- **state**: ` + "`active`" + ` (exposed; resource checks enforced), ` + "`metadata_only`" + ` (exposed;
  touches no protected resource, so only the tool-level checks apply), ` + "`not_exposed`" + `
  (never registered; a call is refused with ` + "`unsupported`" + `).
- **standard / bounded / unrestricted**: ` + "`allow`" + `; ` + "`require_grant`" + ` (windows and
  processes the session did not launch, the whole display and reading the clipboard need a
  consent grant from the host's provider); ` + "`manifest`" + ` (the manifest must list the
  tool and cover the resource); ` + "`deny`" + `.
- **refusal**: the code the mode stage refuses with most often. Hard invariants
  (` + "`self_target_denied`" + `, ` + "`protected_ui_denied`" + `) and policy (` + "`permission_denied`" + `) apply to every
  tool in every mode.
- **annotations**: the MCP hints tools/list reports (ro = readOnlyHint, destr =
  destructiveHint, idem = idempotentHint, open = openWorldHint). Hints, never authorization.

## Exposed tools

| tool | class | resource | operation | arguments | state | standard | bounded | unrestricted | refusal | annotations | summary |
|---|---|---|---|---|---|---|---|---|---|---|---|
`)
	for _, e := range inv.Entries() {
		if e.Exposed() {
			row(&b, e)
		}
	}
	b.WriteString(`
## Classified but not exposed

These reference tools are classified so that a call is refused with a stable code
(` + "`unsupported`" + `) rather than ` + "`unclassified_tool`" + `; cua-host never registers them.

| tool | class | resource | reason |
|---|---|---|---|
`)
	for _, e := range inv.Entries() {
		if !e.Exposed() {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", e.Tool, e.Class, e.Resource, cell(e.Summary))
		}
	}
	return b.Bytes()
}

func row(b *bytes.Buffer, e Entry) {
	fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s | %s | %s | %s | %s | `%s` | %s | %s |\n",
		e.Tool, e.Class, e.Resource, e.Operation, cell(e.Shape.String()), e.State,
		e.Standard, e.Bounded, e.Unrestricted, e.Refusal, annotationCell(e.Annotations), cell(e.Summary))
}

func annotationCell(a Annotations) string {
	var parts []string
	for _, p := range []struct {
		on   bool
		name string
	}{{a.ReadOnly, "ro"}, {a.Destructive, "destr"}, {a.Idempotent, "idem"}, {a.OpenWorld, "open"}} {
		if p.on {
			parts = append(parts, p.name)
		}
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, ", ")
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
