package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/policy"
	"github.com/cua-host/cua-host/proto/contract"
)

// statusReport is `cua-host status --json`: the startup configuration `cua-host run` would
// use with the same flags and environment. Its keys follow the reference driver's status
// where it has one for the same fact.
type statusReport struct {
	// PermissionMode is "" when the configuration names no valid mode.
	PermissionMode string `json:"permission_mode"`
	// PermissionModeSource is the flag or variable it came from, or "built_in_default".
	PermissionModeSource string `json:"permission_mode_source"`
	// UnrestrictedDisabled is the managed switch.
	UnrestrictedDisabled bool             `json:"unrestricted_disabled_by_admin"`
	ManagedPolicy        policyStatus     `json:"managed_policy"`
	UserPolicy           policyStatus     `json:"user_policy"`
	Manifest             manifestStatus   `json:"capability_manifest"`
	Startup              startupStatusRow `json:"startup"`
	// Sandbox is whether launched programs can be confined here; Display how the
	// display in $DISPLAY admits clients.
	Sandbox sandboxStatus       `json:"sandbox"`
	Display displayAccessStatus `json:"display"`
	// Nested is whether `--display nested` can start here: Xephyr, and a person's display
	// in $DISPLAY to show its window on.
	Nested nestedStatus `json:"nested_display"`
	// ToolContractVersion is the reference driver's tool contract version the tools follow.
	ToolContractVersion string `json:"tool_contract_version"`
}

// startupStatusRow says whether `cua-host run` would start, and if not why.
type startupStatusRow struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// policyStatus is one policy layer.
type policyStatus struct {
	Configured bool   `json:"configured"`
	Path       string `json:"path,omitempty"`
	Source     string `json:"source,omitempty"`
	Format     string `json:"format,omitempty"`
	Valid      bool   `json:"valid"`
	// SHA256 is cua-host's identity of the layer (the worker checks it); DriverSHA256 is
	// the reference driver's digest of the same files.
	SHA256       string `json:"sha256,omitempty"`
	DriverSHA256 string `json:"cua_driver_sha256,omitempty"`
	Error        string `json:"error,omitempty"`
}

// manifestStatus is the capability manifest.
type manifestStatus struct {
	Configured     bool   `json:"configured"`
	Path           string `json:"path,omitempty"`
	Source         string `json:"source,omitempty"`
	Approved       bool   `json:"approved_at_startup"`
	ApprovedSource string `json:"approved_source,omitempty"`
	Valid          bool   `json:"valid"`
	Version        int    `json:"version,omitempty"`
	Vocabulary     string `json:"vocabulary,omitempty"`
	SHA256         string `json:"sha256,omitempty"`
	DriverSHA256   string `json:"cua_driver_sha256,omitempty"`
	ExpiresAfter   string `json:"expires_after,omitempty"`
	IdleTimeout    string `json:"idle_timeout,omitempty"`
	AllowCount     int    `json:"allow_count"`
	DenyCount      int    `json:"deny_count"`
	AskCount       int    `json:"ask_count"`
	Error          string `json:"error,omitempty"`
}

// runStatus is `cua-host status`: it resolves the permission mode, the policy layers and
// the capability manifest from the flags and the environment exactly as `cua-host run`
// does, loads each file, and reports them (paths, SHA-256, approval, load errors) without
// starting anything. Exit 0 when run would start with this configuration, 1 when it would
// refuse to, 2 on a usage error.
func runStatus(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	af := addAuthFlags(fs)
	policyPath := fs.String("policy", "", "user policy file or Rego directory (default $"+policy.EnvPolicyFile+" or $"+policy.EnvDriverPolicyFile+")")
	managedPolicy := fs.String("managed-policy", "", "managed policy file or Rego directory (default $"+policy.EnvManagedPolicyFile+" or $"+policy.EnvDriverManagedPolicyFile+")")
	asJSON := fs.Bool("json", false, "print the status as one JSON object")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: cua-host status [--mode M] [--manifest F | --capability-manifest F --approve-capability-manifest]\n"+
			"                       [--dangerously-bypass-approvals] [--policy F] [--managed-policy F] [--json]\n\n"+
			"The startup configuration `cua-host run` would use with these flags and the environment.\n\n")
		fs.PrintDefaults()
	}
	if code, ok := parseFlagsOnly(fs, "status", args, stdout, stderr); !ok {
		return code
	}
	rep := collectStatus(af, *managedPolicy, *policyPath, getenv)
	rep.Sandbox = probeSandbox()
	rep.Display = probeDisplayAccess(context.Background(), getenv("DISPLAY"), statusXAuthority(getenv))
	rep.Nested = probeNested(getenv)
	rep.ToolContractVersion = contract.ToolContractVersion
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "cua-host status: %v\n", err)
			return 1
		}
	} else {
		printStatus(stdout, rep)
	}
	if !rep.Startup.OK {
		return 1
	}
	return 0
}

// collectStatus resolves and loads everything; the first error is the startup error.
func collectStatus(af *authFlags, managedFlag, userFlag string, getenv func(string) string) statusReport {
	var rep statusReport
	var errs []error
	auth, err := af.resolve(getenv)
	if err != nil {
		errs = append(errs, err)
	}
	if auth.mode != 0 {
		rep.PermissionMode = auth.mode.String()
	}
	rep.PermissionModeSource = firstNonEmpty(auth.modeFrom, "built_in_default")
	rep.UnrestrictedDisabled = auth.unrestrictedDisabled

	managedPath, userPath, perr := policy.ResolvePaths(managedFlag, userFlag, getenv)
	if perr != nil {
		errs = append(errs, fmt.Errorf("policy: %w", perr))
	}
	rep.ManagedPolicy = layerStatus(policy.LayerManaged, managedPath, source(managedFlag, "--managed-policy", getenv, policy.EnvManagedPolicyFile, policy.EnvDriverManagedPolicyFile), &errs)
	rep.UserPolicy = layerStatus(policy.LayerUser, userPath, source(userFlag, "--policy", getenv, policy.EnvPolicyFile, policy.EnvDriverPolicyFile), &errs)
	if perr != nil {
		rep.ManagedPolicy.Error, rep.UserPolicy.Error = perr.Error(), perr.Error()
	}

	ms := manifestStatus{Path: auth.manifestPath, Source: auth.manifestFrom, Approved: auth.approved, ApprovedSource: auth.approvedFrom}
	ms.Configured = ms.Path != ""
	if ms.Configured {
		m, err := authz.LoadManifest(ms.Path, authz.DefaultInventory())
		if err != nil {
			ms.Error = err.Error()
			errs = append(errs, err)
		} else {
			ms.Valid = true
			ms.Version, ms.Vocabulary, ms.SHA256, ms.DriverSHA256 = m.Version, m.Vocabulary.String(), m.SHA256, m.DriverSHA256
			ms.ExpiresAfter, ms.IdleTimeout = m.ExpiresAfter.String(), m.IdleTimeout.String()
			ms.AllowCount, ms.DenyCount, ms.AskCount = len(m.AllowTools), len(m.DenyTools), len(m.AskTools)
		}
	}
	rep.Manifest = ms
	rep.Startup.OK = len(errs) == 0
	if len(errs) > 0 {
		rep.Startup.Error = errs[0].Error()
	}
	return rep
}

// source names where a policy path came from: the flag, or the variable that is set.
func source(flagValue, flagName string, getenv func(string) string, own, driver string) string {
	switch {
	case flagValue != "":
		return flagName
	case getenv(own) != "":
		return own
	case getenv(driver) != "":
		return driver
	}
	return ""
}

// layerStatus loads one layer; a load error is added to errs.
func layerStatus(name, path, from string, errs *[]error) policyStatus {
	st := policyStatus{Configured: path != "", Path: path, Source: from}
	if path == "" {
		return st
	}
	l, err := policy.Load(path)
	if err != nil {
		var le *policy.LoadError
		if errors.As(err, &le) {
			le.Layer = name
		}
		st.Error = err.Error()
		*errs = append(*errs, err)
		return st
	}
	st.Valid, st.Format, st.SHA256, st.DriverSHA256 = true, l.Kind().String(), l.SHA256(), l.DriverSHA256()
	return st
}

// printStatus writes the report for people.
func printStatus(w io.Writer, rep statusReport) {
	mode := rep.PermissionMode
	if mode == "" {
		mode = "invalid"
	}
	fmt.Fprintf(w, "permission mode:      %s (%s)\n", mode, rep.PermissionModeSource)
	unrestricted := "allowed with --dangerously-bypass-approvals"
	if rep.UnrestrictedDisabled {
		unrestricted = "disabled by managed startup configuration"
	}
	fmt.Fprintf(w, "unrestricted mode:    %s\n", unrestricted)
	fmt.Fprintf(w, "tool contract:        %s (the reference driver's; docs/compatibility.md)\n", rep.ToolContractVersion)
	for _, l := range []struct {
		name string
		st   policyStatus
	}{{"managed policy:", rep.ManagedPolicy}, {"user policy:", rep.UserPolicy}} {
		switch {
		case !l.st.Configured && l.st.Error == "":
			fmt.Fprintf(w, "%-21s not configured\n", l.name)
		case !l.st.Valid:
			fmt.Fprintf(w, "%-21s %s (%s): invalid: %s\n", l.name, l.st.Path, l.st.Source, l.st.Error)
		default:
			fmt.Fprintf(w, "%-21s %s (%s, %s)\n%-21s sha256 %s\n%-21s cua-driver sha256 %s\n", l.name, l.st.Path, l.st.Format, l.st.Source, "", l.st.SHA256, "", l.st.DriverSHA256)
		}
	}
	m := rep.Manifest
	switch {
	case !m.Configured:
		fmt.Fprintf(w, "%-21s not configured\n", "capability manifest:")
	default:
		approved := "not approved"
		if m.Approved {
			approved = "approved (" + m.ApprovedSource + ")"
		} else if m.Source == "--manifest" {
			approved = "approved by --manifest"
		}
		fmt.Fprintf(w, "%-21s %s (%s), %s\n", "capability manifest:", m.Path, m.Source, approved)
		if !m.Valid {
			fmt.Fprintf(w, "%-21s invalid: %s\n", "", m.Error)
			break
		}
		fmt.Fprintf(w, "%-21s version %d (%s vocabulary), %d allowed, %d denied, %d ask (denied); expires after %s, idle timeout %s\n",
			"", m.Version, m.Vocabulary, m.AllowCount, m.DenyCount, m.AskCount, m.ExpiresAfter, m.IdleTimeout)
		fmt.Fprintf(w, "%-21s sha256 %s\n", "", m.SHA256)
		if m.DriverSHA256 != "" {
			fmt.Fprintf(w, "%-21s cua-driver sha256 %s\n", "", m.DriverSHA256)
		}
	}
	if rep.Sandbox.Available {
		fmt.Fprintf(w, "%-21s bubblewrap (%s): launched programs are confined\n", "sandbox:", rep.Sandbox.Bwrap)
	} else {
		fmt.Fprintf(w, "%-21s unavailable: launch_app is refused (unless --sandbox off): %s\n", "sandbox:", rep.Sandbox.Error)
	}
	switch d := rep.Display; {
	case d.Name == "":
		fmt.Fprintf(w, "%-21s none in $DISPLAY (run starts a private one)\n", "display:")
	case !d.Checked:
		fmt.Fprintf(w, "%-21s %s: not checked: %s\n", "display:", d.Name, d.Error)
	default:
		fmt.Fprintf(w, "%-21s %s: %s\n", "display:", d.Name, d.Meaning)
		if d.InputMeaning != "" {
			fmt.Fprintf(w, "%-21s %s\n", "person's input:", d.InputMeaning)
		}
	}
	switch n := rep.Nested; {
	case n.Available:
		fmt.Fprintf(w, "%-21s Xephyr (%s): --display nested opens the session's desktop in a window on %s\n", "nested display:", n.Xephyr, n.Parent)
		if n.LargestScreen != "" {
			fmt.Fprintf(w, "%-21s at most %s fits on that screen (a larger --screen is shown scrolled, following the pointer)\n", "", n.LargestScreen)
		}
	default:
		fmt.Fprintf(w, "%-21s unavailable: %s\n", "nested display:", n.Error)
	}
	if rep.Startup.OK {
		fmt.Fprintln(w, "startup:              ok")
	} else {
		fmt.Fprintf(w, "startup:              refused: %s\n", strings.TrimSpace(rep.Startup.Error))
	}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
