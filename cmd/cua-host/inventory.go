package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/cua-host/cua-host/authz"
)

// runInventory prints the reviewed tool inventory: a table, --json for scripts, or
// --markdown (docs/tools.md is this output).
func runInventory(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("inventory", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the inventory as a JSON array")
	asMarkdown := fs.Bool("markdown", false, "print the inventory as docs/tools.md")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() != 0 || (*asJSON && *asMarkdown) {
		fmt.Fprintln(stderr, "usage: cua-host inventory [--json | --markdown]")
		return 2
	}
	inv := authz.DefaultInventory()
	switch {
	case *asJSON:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(inv); err != nil {
			fmt.Fprintf(stderr, "cua-host inventory: %v\n", err)
			return 1
		}
	case *asMarkdown:
		if _, err := stdout.Write(inv.Markdown()); err != nil {
			fmt.Fprintf(stderr, "cua-host inventory: %v\n", err)
			return 1
		}
	default:
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tCLASS\tRESOURCE\tOPERATION\tSTATE\tSTANDARD\tBOUNDED\tUNRESTRICTED\tREFUSAL")
		for _, e := range inv.Entries() {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Tool, e.Class, e.Resource, e.Operation, e.State,
				e.Standard, e.Bounded, e.Unrestricted, e.Refusal)
		}
		if err := tw.Flush(); err != nil {
			fmt.Fprintf(stderr, "cua-host inventory: %v\n", err)
			return 1
		}
	}
	return 0
}
