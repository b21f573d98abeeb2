package desktop

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/internal/desktopentry"
	"github.com/cua-host/cua-host/worker/tool"
	"github.com/cua-host/cua-host/x11"
)

// URLSchemes are the URL schemes a desktop entry whose Exec takes %u or %U may receive.
var URLSchemes = []string{"http", "https", "file", "mailto"}

// maxLaunchArg bounds one file or URL argument.
const maxLaunchArg = 4096

// LaunchRequest is what launch_app asks for: a desktop id, an entry's Name or a program
// (Name), or an absolute path (Path), and the arguments (Args, then URLs).
type LaunchRequest struct {
	Name string
	Path string
	Args []string
	URLs []string
}

// LaunchPlan is exactly what a launch_app call runs.
type LaunchPlan = tool.LaunchPlan

// planLaunch is what launch_app declares it touches (tool.Touches.Launch): the program
// its arguments name, planned against the desktop entries of the XDG data directories of
// the worker's environment, read afresh for every call. A bundle_id without a name or a
// launch_path is refused: Linux has no bundles.
func planLaunch(a *launchArgs) (*LaunchPlan, error) {
	if a.BundleID != nil && a.Name == "" && a.Path == "" {
		return nil, authz.Refuse(authz.CodeUnsupported, "bundle_id is a macOS concept; pass name or launch_path")
	}
	req := LaunchRequest{Name: a.Name, Path: a.Path, Args: a.Args, URLs: a.URLs}
	return PlanLaunch(req, desktopentry.Scan(desktopentry.Dirs(os.Getenv)))
}

// PlanLaunch decides what a launch_app call runs, from the request and the desktop
// entries in cat (see docs/security.md, "Launching applications"):
//
//  1. launch_path, or a name holding "/" (which must be absolute): that program with the
//     arguments as given — not Declared.
//  2. a name that is a desktop id ("debian-xterm" or "debian-xterm.desktop") or exactly
//     one shown entry's Name: that entry. Its Exec line decides the arguments: every
//     argument must be a file (%f, %F) or a URL or file (%u, %U), as many as the field
//     code takes; an entry without a file field code takes none. Anything else is
//     invalid_arguments. A Terminal=true entry runs in a terminal emulator — not Declared.
//  3. another name: the shown entries whose Exec runs that program (by name, or by the
//     base name of an absolute Exec program) and which take these arguments. Exactly one:
//     as in 2. Several: invalid_arguments listing their ids. None: the program on PATH
//     with the arguments as given — not Declared.
func PlanLaunch(req LaunchRequest, cat *desktopentry.Catalog) (*LaunchPlan, error) {
	args := append(append([]string{}, req.Args...), req.URLs...)
	for _, a := range args {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, authz.Refuse(authz.CodeInvalidArguments, "an argument holds a NUL byte")
		}
	}
	switch {
	case req.Path != "" && req.Name != "":
		return nil, authz.Refuse(authz.CodeInvalidArguments, "pass name or launch_path, not both")
	case req.Path != "":
		if !filepath.IsAbs(req.Path) {
			return nil, authz.Refuse(authz.CodeInvalidArguments, "launch_path must be absolute")
		}
		return freePlan(req.Path, args, "launch_path names a program directly")
	case req.Name == "":
		return nil, authz.Refuse(authz.CodeInvalidArguments, "name or launch_path is required")
	case strings.Contains(req.Name, "/"):
		if !filepath.IsAbs(req.Name) {
			return nil, authz.Refuse(authz.CodeInvalidArguments, "name %q is neither a desktop id, an application name, a program name nor an absolute path", req.Name)
		}
		return freePlan(req.Name, args, "a path names a program directly")
	}
	// 2. A desktop id or an entry's Name names the entry.
	id := req.Name
	if !strings.HasSuffix(id, ".desktop") {
		id += ".desktop"
	}
	e, err := cat.Lookup(id)
	switch {
	case err == nil:
		return entryPlan(e, args)
	case !errors.Is(err, desktopentry.ErrNoEntry):
		return nil, authz.Refuse(authz.CodeInvalidArguments, "%v", err)
	}
	var byName, byProgram []*desktopentry.Entry
	for _, e := range cat.Entries() {
		if e.Name == req.Name {
			byName = append(byName, e)
		}
		if prog, _ := e.Program(); prog == req.Name || filepath.IsAbs(prog) && filepath.Base(prog) == req.Name {
			byProgram = append(byProgram, e)
		}
	}
	switch len(byName) {
	case 0:
	case 1:
		return entryPlan(byName[0], args)
	default:
		return nil, authz.Refuse(authz.CodeInvalidArguments, "%d desktop entries are named %q: %s; pass a desktop id", len(byName), req.Name, ids(byName))
	}
	// 3. A program name: the entries that run it and take these arguments.
	var fit []*desktopentry.Entry
	var plans []*LaunchPlan
	for _, e := range byProgram {
		if p, err := entryPlan(e, args); err == nil {
			fit, plans = append(fit, e), append(plans, p)
		}
	}
	switch len(fit) {
	case 0:
		why := "no desktop entry runs " + req.Name
		if len(byProgram) > 0 {
			why = fmt.Sprintf("the desktop entries that run %s (%s) do not take these arguments", req.Name, ids(byProgram))
		}
		return freePlan(req.Name, args, why)
	case 1:
		return plans[0], nil
	}
	return nil, authz.Refuse(authz.CodeInvalidArguments, "%d desktop entries run %s: %s; pass a desktop id", len(fit), req.Name, ids(fit))
}

func ids(es []*desktopentry.Entry) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = strings.TrimSuffix(e.ID, ".desktop")
	}
	return strings.Join(s, ", ")
}

// freePlan runs prog (on PATH, or an absolute path) with args as given.
func freePlan(prog string, args []string, why string) (*LaunchPlan, error) {
	path, err := x11.ResolveExecutable(prog)
	if err != nil {
		return nil, authz.Refuse(authz.CodeInvalidArguments, "%v", err)
	}
	if len(args) > 0 {
		why += "; the arguments are free"
	}
	return finish(&LaunchPlan{Argv: append([]string{path}, args...), Why: why})
}

// entryPlan runs e's Exec line with args as its file or URL arguments.
func entryPlan(e *desktopentry.Entry, args []string) (*LaunchPlan, error) {
	for i, a := range args {
		if err := checkEntryArg(e.Files, a); err != nil {
			return nil, authz.Refuse(authz.CodeInvalidArguments, "argument %d %s for %s: %v", i, quoteArg(a), e.ID, err)
		}
	}
	argv, err := e.Expand(args)
	if err != nil {
		return nil, authz.Refuse(authz.CodeInvalidArguments, "%v", err)
	}
	path, err := x11.ResolveExecutable(argv[0])
	if err != nil {
		return nil, authz.Refuse(authz.CodeInvalidArguments, "desktop entry %s runs %s, which is not installed", e.ID, argv[0])
	}
	argv[0] = path
	p := &LaunchPlan{Argv: argv, DesktopID: e.ID, Declared: true}
	if e.Terminal {
		term, err := terminalEmulator()
		if err != nil {
			return nil, authz.Refuse(authz.CodeInvalidArguments, "desktop entry %s runs in a terminal and %v", e.ID, err)
		}
		p.Argv = append([]string{term, "-e"}, argv...)
		p.Declared, p.Why = false, "desktop entry "+e.ID+" runs a command in a terminal"
	}
	return finish(p)
}

// terminalEmulator finds the program Terminal=true entries run in.
func terminalEmulator() (string, error) {
	for _, t := range []string{"x-terminal-emulator", "xterm"} {
		if p, err := exec.LookPath(t); err == nil && filepath.IsAbs(p) {
			return p, nil
		}
	}
	return "", errors.New("no terminal emulator (x-terminal-emulator, xterm) is installed")
}

func finish(p *LaunchPlan) (*LaunchPlan, error) {
	p.Executable = p.Argv[0]
	if real, err := filepath.EvalSymlinks(p.Argv[0]); err == nil {
		p.Executable = real
	}
	return p, nil
}

// checkEntryArg checks one argument for an entry whose Exec takes files of kind k.
func checkEntryArg(k desktopentry.FileArgs, a string) error {
	switch {
	case k == desktopentry.NoFiles:
		return errors.New("the entry takes no arguments")
	case len(a) > maxLaunchArg:
		return fmt.Errorf("is longer than %d bytes", maxLaunchArg)
	case strings.HasPrefix(a, "-"):
		return errors.New("begins with '-' and would be read as an option")
	case strings.IndexFunc(a, func(r rune) bool { return unicode.IsControl(r) || !unicode.IsPrint(r) && r != ' ' }) >= 0:
		return errors.New("holds control or non-printing characters")
	}
	if strings.HasPrefix(a, "/") || !k.URLs() {
		return checkLocalFile(a)
	}
	return checkURL(a)
}

// checkLocalFile accepts an absolute, clean path of an existing regular file (symbolic
// links followed). Directories are refused.
func checkLocalFile(a string) error {
	switch {
	case !filepath.IsAbs(a):
		return errors.New("is not an absolute path of a file")
	case filepath.Clean(a) != a:
		return fmt.Errorf("is not a clean path (clean form %s)", quoteArg(filepath.Clean(a)))
	}
	st, err := os.Stat(a)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return errors.New("does not exist")
	case err != nil:
		return fmt.Errorf("cannot be read: %v", err)
	case st.IsDir():
		return errors.New("is a directory, not a file")
	case !st.Mode().IsRegular():
		return errors.New("is not a regular file")
	}
	return nil
}

// checkURL accepts an http, https, mailto or file URL (the last naming an existing local
// file), without white space.
func checkURL(a string) error {
	if strings.ContainsAny(a, " \t") {
		return errors.New("is not a URL (it holds white space)")
	}
	u, err := url.Parse(a)
	if err != nil {
		return fmt.Errorf("is not a URL: %v", err)
	}
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" || u.Opaque != "" {
			return fmt.Errorf("is not an %s URL with a host", u.Scheme)
		}
		if u.User != nil {
			return errors.New("URLs with user information are refused")
		}
	case "mailto":
		if u.Opaque == "" {
			return errors.New("is a mailto URL without an address")
		}
	case "file":
		if u.Host != "" && u.Host != "localhost" || u.RawQuery != "" || u.Fragment != "" {
			return errors.New("is a file URL that is not a plain local path")
		}
		return checkLocalFile(u.Path)
	default:
		return fmt.Errorf("has scheme %q; allowed are %s", u.Scheme, strings.Join(URLSchemes, ", "))
	}
	return nil
}

// quoteArg quotes one argument for a message (Go syntax: control characters escaped).
func quoteArg(a string) string { return fmt.Sprintf("%q", a) }

// QuoteCommand is authz.QuoteCommand: argv as one shell-quoted line a person can read.
func QuoteCommand(argv []string) string { return authz.QuoteCommand(argv) }
