package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
)

// parseFlags parses a command's flags. -h and --help print the command's usage to stdout
// and return code 0; a bad flag is reported on stderr with the usage and returns code 2.
// ok is false when the caller must return code.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	// The flag package writes its message and the usage before Parse returns; collect them
	// and send them where the outcome says.
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		stdout.Write(buf.Bytes())
		return 0, false
	case err != nil:
		stderr.Write(buf.Bytes())
		return 2, false
	}
	return 0, true
}

// parseInterspersedFlags is parseFlags for a command whose flags may come before or after
// its positional arguments, which it returns.
func parseInterspersedFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (pos []string, code int, ok bool) {
	for {
		if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
			return nil, code, false
		}
		if fs.NArg() == 0 {
			return pos, 0, true
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
