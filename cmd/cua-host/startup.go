package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/cua-host/cua-host/authz"
)

// Startup configuration read from the environment when no flag sets it. Each setting has
// cua-host's own variable and the reference driver's; cua-host's wins, the reference's is
// read when it is unset, and both set to different values is a startup error (the pattern
// of policy.ResolvePaths).
const (
	envPermissionMode       = "CUA_HOST_PERMISSION_MODE"
	envDriverPermissionMode = "CUA_DRIVER_PERMISSION_MODE"

	envBypass       = "CUA_HOST_DANGEROUSLY_BYPASS_APPROVALS"
	envDriverBypass = "CUA_DRIVER_DANGEROUSLY_BYPASS_APPROVALS"

	envManifestFile       = "CUA_HOST_CAPABILITY_MANIFEST_FILE"
	envDriverManifestFile = "CUA_DRIVER_CAPABILITY_MANIFEST_FILE"

	envManifestApproved       = "CUA_HOST_CAPABILITY_MANIFEST_APPROVED"
	envDriverManifestApproved = "CUA_DRIVER_CAPABILITY_MANIFEST_APPROVED"

	// envDisableUnrestricted, when true, forbids mode unrestricted: a managed machine's
	// way to keep approvals on.
	envDisableUnrestricted       = "CUA_HOST_DISABLE_UNRESTRICTED"
	envDriverDisableUnrestricted = "CUA_DRIVER_DISABLE_UNRESTRICTED"

	// envDriverHTTPToken is the reference driver's name for the HTTP bearer token
	// (cua-host's is mcpproxy.EnvHTTPToken).
	envDriverHTTPToken = "CUA_DRIVER_RS_MCP_HTTP_TOKEN"
)

// The reference driver's startup errors, word for word.
const (
	errMissingBypass       = "permission mode unrestricted requires --dangerously-bypass-approvals at trusted daemon startup"
	errUnexpectedBypass    = "--dangerously-bypass-approvals cannot be combined with a non-unrestricted --permission-mode"
	errMissingManifest     = "permission mode bounded requires --capability-manifest <path> at trusted daemon startup"
	errMissingApproval     = "a configured capability manifest requires --approve-capability-manifest at trusted daemon startup"
	errUnexpectedApproval  = "--approve-capability-manifest requires --capability-manifest <path>"
	errUnrestrictedDisable = "permission mode unrestricted is disabled by managed startup configuration"
)

// envPair names one setting's two variables.
type envPair struct{ own, driver string }

// value returns the setting's value and the variable it came from ("" and "" when both are
// unset). same says when two values mean the same.
func (e envPair) value(getenv func(string) string, same func(a, b string) bool) (v, from string, err error) {
	o, d := getenv(e.own), getenv(e.driver)
	switch {
	case o != "" && d != "" && !same(o, d):
		return "", "", fmt.Errorf("%s=%q and %s=%q disagree; unset one", e.own, o, e.driver, d)
	case o != "":
		return o, e.own, nil
	case d != "":
		return d, e.driver, nil
	}
	return "", "", nil
}

// flag returns a boolean setting: 1, true, yes or on are true; 0, false, no or off (or
// unset) false; anything else is an error, so a typo never weakens a managed setting.
func (e envPair) flag(getenv func(string) string) (on bool, from string, err error) {
	for _, name := range []string{e.own, e.driver} {
		if v := getenv(name); v != "" {
			if _, err := parseBool(v); err != nil {
				return false, "", fmt.Errorf("%s=%q: %w", name, v, err)
			}
		}
	}
	v, from, err := e.value(getenv, func(a, b string) bool {
		x, _ := parseBool(a)
		y, _ := parseBool(b)
		return x == y
	})
	if err != nil || from == "" {
		return false, from, err
	}
	on, _ = parseBool(v)
	return on, from, nil
}

// parseBool reads a boolean environment value.
func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, errors.New("want 1, true, yes or on (or 0, false, no, off)")
}

var (
	pairMode        = envPair{envPermissionMode, envDriverPermissionMode}
	pairBypass      = envPair{envBypass, envDriverBypass}
	pairManifest    = envPair{envManifestFile, envDriverManifestFile}
	pairApproved    = envPair{envManifestApproved, envDriverManifestApproved}
	pairNoUnrestrct = envPair{envDisableUnrestricted, envDriverDisableUnrestricted}
)

// unrestrictedDisabled reads the managed switch that forbids mode unrestricted.
func unrestrictedDisabled(getenv func(string) string) (bool, error) {
	on, _, err := pairNoUnrestrct.flag(getenv)
	return on, err
}

// authFlags are the permission-mode and manifest flags, in cua-host's spelling and the
// reference driver's.
type authFlags struct {
	mode, permissionMode         string
	manifest, capabilityManifest string
	bypass, approve              bool
}

// addAuthFlags registers the flags on fs.
func addAuthFlags(fs *flag.FlagSet) *authFlags {
	f := &authFlags{}
	fs.StringVar(&f.mode, "mode", "", "permission mode: standard (the default), bounded (autonomous) or unrestricted (yolo); default $"+envPermissionMode+" or $"+envDriverPermissionMode)
	fs.StringVar(&f.permissionMode, "permission-mode", "", "the reference driver's name for --mode")
	fs.StringVar(&f.manifest, "manifest", "", "capability manifest (YAML) of a bounded session; naming it here approves it")
	fs.StringVar(&f.capabilityManifest, "capability-manifest", "", "the reference driver's name for --manifest; needs --approve-capability-manifest (default $"+envManifestFile+" or $"+envDriverManifestFile+")")
	fs.BoolVar(&f.approve, "approve-capability-manifest", false, "approve the capability manifest named by --capability-manifest or the environment")
	fs.BoolVar(&f.bypass, "dangerously-bypass-approvals", false, "required with mode unrestricted: skip consent prompts")
	return f
}

// startupAuth is the permission mode and manifest a command line and its environment
// configure, checked the way the reference driver checks them at startup.
type startupAuth struct {
	mode authz.Mode
	// modeFrom, manifestFrom, approvedFrom and bypassFrom name where each setting came
	// from: a flag, an environment variable, or "" (the default, or not set).
	modeFrom     string
	manifestPath string
	manifestFrom string
	approved     bool
	approvedFrom string
	bypass       bool
	bypassFrom   string
	// unrestrictedDisabled is the managed switch (either variable).
	unrestrictedDisabled bool
}

// resolve reads the flags, then the environment for what they leave unset, and checks the
// combination. The checks and their messages are the reference driver's; the approval
// requirement applies to a manifest configured the reference's way (--capability-manifest
// or the environment), while cua-host's --manifest approves the file it names, as it
// always has. The returned startupAuth holds what was read even with an error.
func (f *authFlags) resolve(getenv func(string) string) (startupAuth, error) {
	var a startupAuth
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	modeName := ""
	switch {
	case f.mode != "" && f.permissionMode != "" && !sameMode(f.mode, f.permissionMode):
		keep(fmt.Errorf("--mode %s and --permission-mode %s disagree", f.mode, f.permissionMode))
	case f.mode != "":
		modeName, a.modeFrom = f.mode, "--mode"
	case f.permissionMode != "":
		modeName, a.modeFrom = f.permissionMode, "--permission-mode"
	default:
		var err error
		modeName, a.modeFrom, err = pairMode.value(getenv, sameMode)
		keep(err)
	}
	if first == nil {
		a.mode = authz.Standard
		if modeName != "" {
			mode, err := authz.ParseMode(modeName)
			keep(err)
			a.mode = mode
		}
	}
	a.bypass, a.bypassFrom = f.bypass, "--dangerously-bypass-approvals"
	if !f.bypass {
		var err error
		a.bypass, a.bypassFrom, err = pairBypass.flag(getenv)
		keep(err)
	}
	switch {
	case f.manifest != "" && f.capabilityManifest != "" && f.manifest != f.capabilityManifest:
		keep(fmt.Errorf("--manifest %s and --capability-manifest %s name different files", f.manifest, f.capabilityManifest))
	case f.manifest != "":
		a.manifestPath, a.manifestFrom = f.manifest, "--manifest"
	case f.capabilityManifest != "":
		a.manifestPath, a.manifestFrom = f.capabilityManifest, "--capability-manifest"
	default:
		var err error
		a.manifestPath, a.manifestFrom, err = pairManifest.value(getenv, func(x, y string) bool { return x == y })
		keep(err)
	}
	a.approved, a.approvedFrom = f.approve, "--approve-capability-manifest"
	if !f.approve {
		var err error
		a.approved, a.approvedFrom, err = pairApproved.flag(getenv)
		keep(err)
	}
	var err error
	a.unrestrictedDisabled, err = unrestrictedDisabled(getenv)
	keep(err)
	if first != nil {
		return a, first
	}
	switch {
	case a.mode == authz.Unrestricted && !a.bypass:
		return a, errors.New(errMissingBypass)
	case a.mode != authz.Unrestricted && a.bypass:
		return a, errors.New(errUnexpectedBypass)
	case a.mode == authz.Unrestricted && a.unrestrictedDisabled:
		return a, errors.New(errUnrestrictedDisable)
	case a.mode == authz.Bounded && a.manifestPath == "":
		return a, errors.New(errMissingManifest)
	case a.manifestPath != "" && a.manifestFrom != "--manifest" && !a.approved:
		return a, errors.New(errMissingApproval)
	case a.approved && a.manifestPath == "":
		return a, errors.New(errUnexpectedApproval)
	case a.manifestPath != "" && a.mode != authz.Bounded:
		return a, fmt.Errorf("a capability manifest (%s) applies only to permission mode bounded in cua-host (the mode is %s)", a.manifestFrom, a.mode)
	}
	return a, nil
}

// sameMode reports whether two mode names name the same mode.
func sameMode(a, b string) bool {
	x, errA := authz.ParseMode(a)
	y, errB := authz.ParseMode(b)
	if errA != nil || errB != nil {
		return a == b
	}
	return x == y
}
