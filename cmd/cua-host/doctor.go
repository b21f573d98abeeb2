package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cua-host/cua-host/host/doctor"
)

// runDoctor is `cua-host doctor`: whether this machine has what the default `cua-host
// run` (with the same --display and environment) needs, check by check (host/doctor).
// Exit 0 when nothing it needs is missing, 1 when something is (the report says what and
// which packages provide it), 2 on a usage error.
func runDoctor(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	disp := fs.String("display", "auto", "the display to check: auto ($DISPLAY, where run shows a nested display, else the private one run would start), private, or :N")
	asJSON := fs.Bool("json", false, "print the report as one JSON object")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: cua-host doctor [--display auto|private|:N] [--json]\n\n"+
			"Whether `cua-host run` would have everything it needs here: the display and its extensions,\n"+
			"the window manager, the accessibility bus, the sandbox, and the programs of private and nested\n"+
			"displays. Exit 0: ready; 1: something run needs is missing; 2: usage (docs/doctor.md).\n\n")
		fs.PrintDefaults()
	}
	if code, ok := parseFlagsOnly(fs, "doctor", args, stdout, stderr); !ok {
		return code
	}
	switch d := *disp; {
	case d == "auto", d == "private":
	case strings.HasPrefix(d, ":") && len(d) > 1:
	default:
		fmt.Fprintf(stderr, "cua-host doctor: --display %q: want auto, private or :N\n", d)
		return 2
	}
	rep := doctor.Run(ctx, doctor.Options{Display: *disp, Getenv: getenv})
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "cua-host doctor: %v\n", err)
			return 1
		}
	} else if err := rep.WriteText(stdout); err != nil {
		fmt.Fprintf(stderr, "cua-host doctor: %v\n", err)
		return 1
	}
	if !rep.Ready {
		return 1
	}
	return 0
}
