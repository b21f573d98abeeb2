package worker

import (
	"github.com/cua-host/cua-host/authz"
)

// executable resolves the program a launching tool runs, as the tool declares it
// (tool.Touches.Launch, read from the call's decoded struct c): the exact command line (a
// desktop entry's Exec line with its file or URL arguments, or a program with free
// arguments), its executable with symbolic links resolved, and whether it is a desktop
// application the system declares. A tool of the executable shape that declares no plan
// is refused, and so are arguments that do not decode: nothing can be decided on.
func (r *resolver) executable(toolName string, c *callArgs) resolution {
	planLaunch := r.touches[toolName].Launch
	if planLaunch == nil || c.typed == nil {
		return resolution{Target: authz.Target{Unresolved: authz.Refuse(authz.CodeUnsupported, "%s declares no program to launch", toolName)}}
	}
	if c.err != nil {
		return resolution{Target: authz.Target{Unresolved: asRefusal(c.err)}}
	}
	plan, err := planLaunch(c.typed)
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
