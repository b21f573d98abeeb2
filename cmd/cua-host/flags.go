package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cua-host/cua-host/host"
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

// parseFlagsOnly is parseFlags for a command that takes no positional arguments: any are
// an error, reported as "cua-host CMD: unexpected arguments …" with exit code 2.
func parseFlagsOnly(fs *flag.FlagSet, cmd string, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code, false
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "cua-host %s: unexpected arguments %q\n", cmd, fs.Args())
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

// supervise prepares this process to supervise a tree (`run`, `serve`): it becomes a
// subreaper, so applications orphaned by a dying worker can still be reached; it returns
// a context ended by SIGINT, SIGTERM or SIGHUP; and it keeps SIGPIPE from killing it when
// its client goes away and takes the standard streams with it (Notify, not Ignore: an
// ignored signal would be inherited by every program a session launches). Call stop when
// done.
func supervise(ctx context.Context, log *slog.Logger) (_ context.Context, stop func()) {
	if err := host.BecomeSubreaper(); err != nil {
		log.Warn("cannot become a subreaper; orphaned applications go to init", "err", err)
	}
	ctx, stopSignals := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	return ctx, func() {
		signal.Stop(pipes)
		stopSignals()
	}
}

// argsObject reads a command's optional ARGS_JSON positional argument at index i: "{}"
// when absent, else the argument, which must be one JSON object.
func argsObject(fs *flag.FlagSet, i int, stderr io.Writer) (json.RawMessage, bool) {
	if fs.NArg() <= i {
		return json.RawMessage("{}"), true
	}
	raw := json.RawMessage(fs.Arg(i))
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		fmt.Fprintf(stderr, "cua-host call: ARGS_JSON must be a JSON object: %s\n", fs.Arg(i))
		return nil, false
	}
	return raw, true
}

// logFlags are the logging flags of a supervising command (`run`, `serve`).
type logFlags struct {
	file, level *string
}

// addLogFlags registers --log-file and --log-level on fs.
func addLogFlags(fs *flag.FlagSet) logFlags {
	return logFlags{
		file:  fs.String("log-file", "", "append logs to this file instead of stderr"),
		level: fs.String("log-level", "info", "log level: debug, info, warn, error"),
	}
}

// parseLevel returns the --log-level value.
func (lf logFlags) parseLevel() (slog.Level, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*lf.level)); err != nil {
		return 0, fmt.Errorf("bad --log-level: %w", err)
	}
	return lvl, nil
}

// open returns where logs go — the --log-file (close it when done), else stderr when it is
// a file (children inherit it as theirs), else os.Stderr — and a text logger on it at lvl
// tagged with component.
func (lf logFlags) open(stderr io.Writer, lvl slog.Level, component string) (out *os.File, log *slog.Logger, closeFile func(), err error) {
	out, closeFile = os.Stderr, func() {}
	if f, ok := stderr.(*os.File); ok {
		out = f
	}
	if *lf.file != "" {
		f, err := os.OpenFile(*lf.file, os.O_WRONLY|os.O_APPEND|os.O_CREATE|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--log-file: %w", err)
		}
		out, closeFile = f, func() { f.Close() }
	}
	return out, slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: lvl})).With("component", component), closeFile, nil
}
