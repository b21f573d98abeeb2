package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"time"
)

// TTYConsentOptions configure ConsentTTY.
type TTYConsentOptions struct {
	// Path is the terminal to prompt on; empty means /dev/tty, the controlling terminal.
	// It is never the agent's stdin or stdout.
	Path string
	// GrantTTL is how long a "yes" answer is reused for the same resource and operation;
	// zero means 15 minutes.
	GrantTTL time.Duration
	// Timeout bounds one question; no answer in time declines. Zero means 2 minutes.
	Timeout time.Duration
}

// ConsentTTY returns a consent provider that asks a person on the controlling terminal,
// one question at a time: "y" grants for GrantTTL, "o" grants this one call, anything else
// (or no answer within Timeout) declines. When the terminal cannot be opened (no
// controlling terminal, a service) it reports Unavailable, and the call is refused with
// authorization_required.
func ConsentTTY(opts TTYConsentOptions) ConsentFunc {
	if opts.Path == "" {
		opts.Path = "/dev/tty"
	}
	if opts.GrantTTL == 0 {
		opts.GrantTTL = 15 * time.Minute
	}
	if opts.Timeout == 0 {
		opts.Timeout = 2 * time.Minute
	}
	turn := make(chan struct{}, 1) // one question on the terminal at a time
	turn <- struct{}{}
	return func(ctx context.Context, req ConsentRequest) ConsentDecision {
		select {
		case <-turn:
		case <-ctx.Done():
			return ConsentDecision{}
		}
		defer func() { turn <- struct{}{} }()
		tty, err := os.OpenFile(opts.Path, os.O_RDWR, 0)
		if err != nil {
			return ConsentDecision{Unavailable: true}
		}
		defer tty.Close()
		qctx, cancel := context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
		return promptConsent(qctx, tty, tty, req, opts.GrantTTL)
	}
}

// promptConsent writes the question for req to out and reads one answer line from in
// until ctx ends. in must support read deadlines (a terminal or a pipe).
func promptConsent(ctx context.Context, in *os.File, out io.Writer, req ConsentRequest, ttl time.Duration) ConsentDecision {
	fmt.Fprintf(out, "\ncua-host: %s\n  resource %s, operation %s\n  Allow? [y] yes for %v  [o] only this call  [N] no: ",
		printable(req.Description), printable(req.Resource), printable(req.Operation), ttl)
	if err := in.SetReadDeadline(time.Time{}); err != nil {
		fmt.Fprintln(out, "(cannot wait for an answer here: declined)")
		return ConsentDecision{}
	}
	stop := context.AfterFunc(ctx, func() { in.SetReadDeadline(time.Now()) })
	defer stop()
	line, err := readLine(in)
	if err != nil {
		fmt.Fprintln(out, "\n(no answer: declined)")
		return ConsentDecision{}
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		fmt.Fprintf(out, "(granted for %v)\n", ttl)
		return ConsentDecision{Granted: true, TTL: ttl}
	case "o", "once":
		fmt.Fprintln(out, "(granted for this call)")
		return ConsentDecision{Granted: true}
	}
	fmt.Fprintln(out, "(declined)")
	return ConsentDecision{}
}

// readLine reads up to a newline, byte by byte so nothing after it is consumed.
func readLine(r io.Reader) (string, error) {
	var b bytes.Buffer
	var one [1]byte
	for b.Len() < 256 {
		n, err := r.Read(one[:])
		if n == 1 {
			if one[0] == '\n' {
				return b.String(), nil
			}
			b.WriteByte(one[0])
		}
		if err != nil {
			if errors.Is(err, io.EOF) && b.Len() > 0 {
				return b.String(), nil
			}
			return "", err
		}
	}
	return b.String(), nil
}

// printable replaces control characters, so a window title cannot rewrite the prompt with
// terminal escape sequences.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}
