package host

import (
	"fmt"
	"strings"
)

// EnvAllowlist names the variables a worker inherits; every LC_* variable is allowed too.
// XDG_DATA_HOME and XDG_DATA_DIRS say where the desktop entries launch_app may run are
// (docs/security.md, "Launching applications"). GOMAXPROCS overrides the one thread a
// worker runs Go code on (docs/adr/0018).
var envAllowlist = map[string]bool{
	"PATH": true, "HOME": true, "LANG": true, "DISPLAY": true, "XAUTHORITY": true,
	"DBUS_SESSION_BUS_ADDRESS": true, "XDG_RUNTIME_DIR": true,
	"XDG_DATA_HOME": true, "XDG_DATA_DIRS": true,
	"GOMAXPROCS": true,
}

// EnvAllowed reports whether a worker may receive the variable name.
func EnvAllowed(name string) bool {
	return envAllowlist[name] || strings.HasPrefix(name, "LC_")
}

// childEnv builds a child's environment: the allowlisted part of base, then overrides
// (which must themselves be allowlisted). Later entries win.
func childEnv(base, overrides []string) ([]string, error) {
	vals := map[string]string{}
	var order []string
	set := func(kv string, strict bool) error {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			if strict {
				return fmt.Errorf("environment entry %q is not NAME=VALUE", kv)
			}
			return nil
		}
		if !EnvAllowed(k) {
			if strict {
				return fmt.Errorf("environment variable %s is not in the worker's allowlist", k)
			}
			return nil
		}
		if _, seen := vals[k]; !seen {
			order = append(order, k)
		}
		vals[k] = v
		return nil
	}
	for _, kv := range base {
		_ = set(kv, false)
	}
	for _, kv := range overrides {
		if err := set(kv, true); err != nil {
			return nil, err
		}
	}
	env := make([]string, 0, len(order))
	for _, k := range order {
		env = append(env, k+"="+vals[k])
	}
	return env, nil
}
