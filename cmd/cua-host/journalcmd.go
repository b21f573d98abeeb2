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

// runJournal serves `cua-host journal verify|head|show`.
func runJournal(args []string, stdout, stderr io.Writer) int {
	const usage = "usage: cua-host journal verify [--json] [--head HASH] DIR | cua-host journal head [--json] DIR | cua-host journal show DIR [-o FILE] [--json] [--recording NAME]"
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
	case "head":
		return runJournalHead(args[1:], stdout, stderr)
	case "show":
		return runJournalShow(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "cua-host journal: unknown command %q (want verify, head or show)\n", args[0])
	return 2
}

func runJournalVerify(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cua-host journal verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	head := fs.String("head", "", "a head kept elsewhere (the hash the host logged when it closed its segment): fail unless a record has it")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: cua-host journal verify [--json] [--head HASH] DIR")
		fs.PrintDefaults()
	}
	pos, code, ok := parseInterspersedFlags(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: cua-host journal verify [--json] [--head HASH] DIR")
		return 2
	}
	var rep *journal.Report
	var err error
	if *head != "" {
		rep, err = journal.VerifyHead(pos[0], *head)
	} else {
		rep, err = journal.Verify(pos[0])
	}
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

// verifyText says, per segment, whether it verifies, and names the first bad record; then
// whether the head it was given was found.
func verifyText(rep *journal.Report) string {
	var b bytes.Buffer
	for _, s := range rep.Segments {
		unchained := ""
		if s.Unchained {
			unchained = "; unchained (written by an older version): a deleted segment cannot be detected"
		}
		switch {
		case !s.Intact:
			fmt.Fprintf(&b, "segment %s: TAMPERED: %s\n", s.ID, s.Problems[0])
			for _, p := range s.Problems[1:] {
				fmt.Fprintf(&b, "  also: %s\n", p)
			}
		case !s.Complete:
			fmt.Fprintf(&b, "segment %s: CUT OFF: %d records intact, head %s; %s%s\n", s.ID, s.Records, s.Head, s.CutOff, unchained)
		default:
			fmt.Fprintf(&b, "segment %s: OK: %d records, chain intact, ended in order, head %s%s\n", s.ID, s.Records, s.Head, unchained)
		}
		for _, u := range s.Unknown {
			fmt.Fprintf(&b, "  outcome unknown: record %d, call %d %s of session %s\n", u.Seq, u.CallSeq, u.Tool, u.Session)
		}
		if rep.Single && s.Chain != nil && s.Chain.Number > 1 {
			fmt.Fprintf(&b, "  segment number %d checked alone: whether the segments before it are still there was not checked (verify the journal directory)\n", s.Chain.Number)
		}
	}
	if a := rep.Anchor; a != nil {
		switch {
		case !a.Found:
			last := rep.Segments[len(rep.Segments)-1]
			fmt.Fprintf(&b, "head %s: NOT FOUND: no record has it: the records up to it were deleted or rewritten (the newest segments deleted?); the journal ends at segment %s, record %d, head %s\n", a.Hash, last.ID, last.Records, last.Head)
		case a.After == 0:
			fmt.Fprintf(&b, "head %s: found: the journal's last record (segment %s, record %d)\n", a.Hash, a.Segment, a.Seq)
		default:
			where := "not its segment's last"
			if a.End {
				where = "its segment's last"
			}
			fmt.Fprintf(&b, "head %s: found at record %d of segment %s (%s); %d record(s) follow it\n", a.Hash, a.Seq, a.Segment, where, a.After)
		}
	}
	return b.String()
}

// runJournalHead prints the head of a journal: its newest segment's last record.
func runJournalHead(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cua-host journal head", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the head as JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: cua-host journal head [--json] DIR")
		fs.PrintDefaults()
	}
	pos, code, ok := parseInterspersedFlags(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: cua-host journal head [--json] DIR")
		return 2
	}
	h, err := journal.ReadHead(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "cua-host journal head: %v\n", err)
		return 2
	}
	if *asJSON {
		b, _ := json.MarshalIndent(h, "", "  ")
		fmt.Fprintln(stdout, string(b))
		return 0
	}
	fmt.Fprint(stdout, headText(h))
	return 0
}

// headText says where a journal's head is, and its hash.
func headText(h *journal.Head) string {
	number := "unchained"
	if h.Number > 0 {
		number = fmt.Sprintf("number %d", h.Number)
	}
	open := ""
	if h.Open {
		open = " (a host is still writing it: the head moves on)"
	}
	return fmt.Sprintf("segment %s (%s): %d records, head %s%s\n", h.Segment, number, h.Records, h.Hash, open)
}

func runJournalShow(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cua-host journal show", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the report to this file (default: standard output)")
	asJSON := fs.Bool("json", false, "write JSON instead of HTML")
	recording := fs.String("recording", "", "show only the calls of the recordings of this name (start_recording's name)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: cua-host journal show DIR [-o FILE] [--json] [--recording NAME]")
		fs.PrintDefaults()
	}
	pos, code, ok := parseInterspersedFlags(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: cua-host journal show DIR [-o FILE] [--json] [--recording NAME]")
		return 2
	}
	rep, err := report.Build(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "cua-host journal show: %v\n", err)
		return 2
	}
	if *recording != "" && !rep.KeepRecording(*recording) {
		fmt.Fprintf(stderr, "cua-host journal show: no call of %s belongs to a recording named %q\n", pos[0], *recording)
		return 1
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
