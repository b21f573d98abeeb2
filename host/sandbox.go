package host

import (
	"os"
	"path/filepath"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
)

// sandboxConfig is Hello's sandbox: what Options.Sandbox says, plus what only the host
// knows must stay out of sight of launched programs: the journal directory, the credentials directory, the socket of the person's
// session bus when the Secret Service is the credential store, and the cookie
// files of the person's display (the XAUTHORITY the host was started with, and the
// display's own when it is not the host's private one).
func sandboxConfig(o Options) *cuav1.Sandbox {
	sb := &cuav1.Sandbox{Disabled: o.Sandbox.Disabled}
	add := func(p string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			sb.HidePaths = append(sb.HidePaths, abs)
		}
	}
	for _, p := range o.Sandbox.Hide {
		add(p)
	}
	if o.Journal != nil {
		add(o.Journal.Dir)
	}
	add(o.SecretsDir)
	if o.secretService != nil {
		// The person's bus: through it a launched program could ask the secret store.
		for _, p := range busSocketPaths(o.secretService.GetBusAddress()) {
			add(p)
		}
	}
	if xa := os.Getenv("XAUTHORITY"); xa != "" && xa != o.Display.XAuthority {
		add(xa)
	}
	if !o.Display.Private {
		add(o.Display.XAuthority)
	}
	return sb
}
