package worker

import (
	"os"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/internal/desktopentry"
	"github.com/cua-host/cua-host/worker/desktop"
)

// executable resolves launch_app's program: the exact command line it will run (a
// desktop entry's Exec line with its file or URL arguments, or a program with free
// arguments), its executable with symbolic links resolved, and whether it is a desktop
// application the system declares. The desktop entries are read afresh for every call,
// from the XDG data directories of the worker's environment.
func (r *resolver) executable(args map[string]any) resolution {
	req, err := desktop.LaunchRequestFromArgs(args)
	if err != nil {
		return resolution{Target: authz.Target{Unresolved: asRefusal(err)}}
	}
	plan, err := desktop.PlanLaunch(req, desktopentry.Scan(desktopentry.Dirs(os.Getenv)))
	if err != nil {
		return resolution{Target: authz.Target{Unresolved: asRefusal(err)}}
	}
	return resolution{Target: authz.Target{Resource: authz.Resource{
		Kind: authz.ResourceApplication, Op: authz.OpLaunch, Executable: plan.Executable,
		Argv: plan.Argv, DesktopID: plan.DesktopID, Declared: plan.Declared,
	}}}
}

// asRefusal returns err as a refusal (invalid_arguments when it is not one).
func asRefusal(err error) *authz.Refusal {
	if r, ok := err.(*authz.Refusal); ok {
		return r
	}
	return authz.Refuse(authz.CodeInvalidArguments, "%v", err)
}
