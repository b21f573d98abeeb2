package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/cua-host/cua-host/host/journal"
	"github.com/cua-host/cua-host/host/journal/report"
)

// runJournal serves `cua-host journal verify|show`.
func runJournal(args []string, stdout, stderr io.Writer) int {
	const usage = "usage: cua-host journal verify [--json] DIR | cua-host journal show DIR [-o FILE] [--json]"
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdout, usage)
		return 0
	case "verify":
		return runJournalVerify(args[1:], stdout, stderr)
	case "show":
		return runJournalShow(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "cua-host journal: unknown command %q (want verify or show)\n", args[0])
	return 2
}

func runJournalVerify(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cua-host journal verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: cua-host journal verify [--json] DIR")
		fs.PrintDefaults()
	}
	pos, code, ok := parseInterspersedFlags(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: cua-host journal verify [--json] DIR")
		return 2
	}
	rep, err := journal.Verify(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "cua-host journal verify: %v\n", err)
		return 2
	}
	if *asJSON {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		fmt.Fprint(stdout, verifyText(rep))
	}
	if rep.OK() {
		return 0
	}
	return 1
}

// verifyText says, per segment, whether it verifies, and names the first bad record.
func verifyText(rep *journal.Report) string {
	var b bytes.Buffer
	for _, s := range rep.Segments {
		switch {
		case !s.Intact:
			fmt.Fprintf(&b, "segment %s: TAMPERED: %s\n", s.ID, s.Problems[0])
			for _, p := range s.Problems[1:] {
				fmt.Fprintf(&b, "  also: %s\n", p)
			}
		case !s.Complete:
			fmt.Fprintf(&b, "segment %s: CUT OFF: %d records intact, head %s; %s\n", s.ID, s.Records, s.Head, s.CutOff)
		default:
			fmt.Fprintf(&b, "segment %s: OK: %d records, chain intact, ended in order, head %s\n", s.ID, s.Records, s.Head)
		}
		for _, u := range s.Unknown {
			fmt.Fprintf(&b, "  outcome unknown: record %d, call %d %s of session %s\n", u.Seq, u.CallSeq, u.Tool, u.Session)
		}
	}
	return b.String()
}

func runJournalShow(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cua-host journal show", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the report to this file (default: standard output)")
	asJSON := fs.Bool("json", false, "write JSON instead of HTML")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: cua-host journal show DIR [-o FILE] [--json]")
		fs.PrintDefaults()
	}
	pos, code, ok := parseInterspersedFlags(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: cua-host journal show DIR [-o FILE] [--json]")
		return 2
	}
	rep, err := report.Build(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "cua-host journal show: %v\n", err)
		return 2
	}
	var buf bytes.Buffer
	if *asJSON {
		err = report.WriteJSON(&buf, rep)
	} else {
		err = report.WriteHTML(&buf, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "cua-host journal show: %v\n", err)
		return 1
	}
	if *out == "" {
		stdout.Write(buf.Bytes())
		return 0
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o600); err != nil {
		fmt.Fprintf(stderr, "cua-host journal show: %v\n", err)
		return 1
	}
	return 0
}
