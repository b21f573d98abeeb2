package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/worker"
	"github.com/cua-host/cua-host/worker/tool"
)

// listedTool is one tool of `cua-host list-tools --json`, shaped like an MCP tools/list
// entry.
type listedTool struct {
	Name        string           `json:"name"`
	Description string           `json:"description"`
	InputSchema json.RawMessage  `json:"inputSchema"`
	Annotations tool.Annotations `json:"annotations"`
}

// runListTools is `cua-host list-tools`: every tool a shipped worker offers, sorted by
// name, as `name: first sentence` lines (the reference driver's list-tools), or with
// --json as {"tools": [{name, description, inputSchema, annotations}]}. It needs no
// display and starts nothing. A policy or a manifest may hide tools from a session; this
// lists what the worker registers.
func runListTools(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list-tools", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the tools with their input schemas as one JSON object")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: cua-host list-tools [--json]\n\nEvery tool a worker offers, with --json its input schema and annotations.\n\n")
		fs.PrintDefaults()
	}
	if code, ok := parseFlagsOnly(fs, "list-tools", args, stdout, stderr); !ok {
		return code
	}
	inv := authz.DefaultInventory()
	var tools []listedTool
	for _, t := range worker.Catalog() {
		if _, r := inv.Classify(t.Name); r != nil {
			continue // registered but never callable: not offered
		}
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		tools = append(tools, listedTool{Name: t.Name, Description: t.Description, InputSchema: schema, Annotations: t.Annotations})
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"tools": tools}); err != nil {
			fmt.Fprintf(stderr, "cua-host list-tools: %v\n", err)
			return 1
		}
		return 0
	}
	for _, t := range tools {
		if s := firstSentence(t.Description); s != "" {
			fmt.Fprintf(stdout, "%s: %s\n", t.Name, s)
		} else {
			fmt.Fprintln(stdout, t.Name)
		}
	}
	return 0
}

// firstSentence returns s up to and including its first ". " (or all of s).
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
