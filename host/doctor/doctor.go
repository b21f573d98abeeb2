package doctor

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Status is one check's verdict.
type Status int

// Statuses.
const (
	// OK: present and working.
	OK Status = iota + 1
	// Warn: present but degraded, or absent so that the default `run` loses something it
	// would use (slower captures, no accessibility tree).
	Warn
	// Missing: absent or not working. It stops the default `run` only when the check is
	// Required; otherwise only the options that need it (--display private, nested
	// displays) are affected.
	Missing
)

// String returns ok, warn or missing.
func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Warn:
		return "warn"
	case Missing:
		return "missing"
	}
	return fmt.Sprintf("status(%d)", int(s))
}

// MarshalText writes the status as String does, for JSON.
func (s Status) MarshalText() ([]byte, error) {
	if s < OK || s > Missing {
		return nil, fmt.Errorf("doctor: invalid status %d", int(s))
	}
	return []byte(s.String()), nil
}

// Check is one thing the report looked at.
type Check struct {
	// ID is stable, for scripts ("x_server", "ext_xtest", "sandbox", …).
	ID string `json:"id"`
	// Title names the thing for people.
	Title  string `json:"title"`
	Status Status `json:"status"`
	// Required is true when the default `run` (with the same --display) needs it: the report
	// is not ready while a required check is Missing.
	Required bool `json:"required"`
	// Found is what the check saw.
	Found string `json:"found"`
	// Meaning says what the finding means for the modes and displays.
	Meaning string `json:"meaning,omitempty"`
	// Install are the Debian packages that provide what is missing.
	Install []string `json:"install,omitempty"`
}

// Report is the outcome of Run.
type Report struct {
	// Display is what the default `run` with these options would drive: ":N" (a display
	// shared with a person) or "private" (one it starts).
	Display string `json:"display"`
	// DisplaySource says why: "--display", "$DISPLAY", or "no $DISPLAY".
	DisplaySource string `json:"display_source"`
	// Shared is true for a display `run` would share with a person.
	Shared bool `json:"shared"`
	// Ready is true when no required check is Missing.
	Ready bool `json:"ready"`
	// Missing are the IDs of the required checks that are Missing.
	Missing []string `json:"missing"`
	// Checks are every check made, in the order they were made. A check that depends on
	// another one that failed (the extensions of a display that could not be opened) is
	// left out rather than reported as missing twice.
	Checks []Check `json:"checks"`
}

// Check returns the check with id, if it was made.
func (r Report) Check(id string) (Check, bool) {
	for _, c := range r.Checks {
		if c.ID == id {
			return c, true
		}
	}
	return Check{}, false
}

// Options configure Run.
type Options struct {
	// Display is "auto" (or empty: $DISPLAY when set, else a private display), "private",
	// or ":N", as `run --display` takes it.
	Display string
	// Getenv reads the environment `run` would start with (DISPLAY, XAUTHORITY, HOME,
	// DBUS_SESSION_BUS_ADDRESS, PATH); nil means os.Getenv.
	Getenv func(string) string
	// Logger receives debug lines (the private display's processes); nil discards.
	Logger *slog.Logger
	// Timeout bounds each probe that talks to a server; zero means 10 s.
	Timeout time.Duration
}

// Run makes every check and returns the report. Preconditions: opts.Display is "",
// "auto", "private" or ":N" (a usage error otherwise, which the command reports).
func Run(ctx context.Context, opts Options) Report {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	r := &Report{}
	switch name := opts.Getenv("DISPLAY"); {
	case opts.Display == "private":
		r.Display, r.DisplaySource = "private", "--display"
	case strings.HasPrefix(opts.Display, ":"):
		r.Display, r.DisplaySource, r.Shared = opts.Display, "--display", true
	case name != "":
		r.Display, r.DisplaySource, r.Shared = name, "$DISPLAY", true
	default:
		r.Display, r.DisplaySource = "private", "no $DISPLAY"
	}
	c := &checker{opts: opts, r: r}
	if r.Shared {
		c.sharedDisplay(ctx, r.Display)
	} else {
		c.privateDisplay(ctx)
	}
	c.sandbox()
	c.programs()
	r.Missing = []string{}
	for _, ch := range r.Checks {
		if ch.Required && ch.Status == Missing {
			r.Missing = append(r.Missing, ch.ID)
		}
	}
	r.Ready = len(r.Missing) == 0
	return *r
}

// checker accumulates one report.
type checker struct {
	opts Options
	r    *Report
}

func (c *checker) add(ch Check) { c.r.Checks = append(c.r.Checks, ch) }

// xauthority is the Xauthority file an X client started with this environment reads:
// $XAUTHORITY, else ~/.Xauthority.
func (c *checker) xauthority() string {
	if v := c.opts.Getenv("XAUTHORITY"); v != "" {
		return v
	}
	if home := c.opts.Getenv("HOME"); home != "" {
		return filepath.Join(home, ".Xauthority")
	}
	return ""
}

// lookPath finds a program on the environment's PATH, as display.Start does.
func (c *checker) lookPath(name string) (string, bool) {
	path := c.opts.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}
