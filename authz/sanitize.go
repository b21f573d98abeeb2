package authz

import "github.com/cua-host/cua-host/policy"

// Sanitize is stage 2 of the pipeline, run once per call before anything decides on it:
// it returns the canonical tool name ("type_text" for the alias "type_text_chars") and a
// copy of args without the reserved (underscore-prefixed) top-level keys, so nothing a
// caller puts there can select or widen authority. The name rules are the policy
// language's (policy.CanonicalTool, policy.Reserved): policy files are written in them.
// Sanitize never modifies args; nested values are shared with args, not copied. The
// result is never nil. Sanitize is idempotent.
func Sanitize(tool string, args map[string]any) (canonicalTool string, clean map[string]any) {
	clean = make(map[string]any, len(args))
	for k, v := range args {
		if !policy.Reserved(k) {
			clean[k] = v
		}
	}
	return policy.CanonicalTool(tool), clean
}

// NormalizeTarget is the last part of stage 2: it rewrites the reference contract's target
// object into the argument names the rest of the pipeline resolves. {"kind":"window",
// "pid":P,"window_id":W} becomes pid and window_id; {"kind":"desktop","display_id":
// "primary"} becomes scope "desktop". The target object stays in args (a policy written
// for the reference constrains it by that name), and the derived names are added, so a
// policy constraining pid sees the pid whichever form the caller used. A target that
// contradicts pid, window_id or scope given beside it, a display other than "primary" or
// a malformed target is refused; null means no target. NormalizeTarget modifies args,
// which must be the copy Sanitize returned; it is idempotent.
func NormalizeTarget(args map[string]any) *Refusal {
	v, ok := args["target"]
	if !ok || v == nil {
		return nil
	}
	t, ok := v.(map[string]any)
	if !ok {
		return Refuse(CodeInvalidArguments, `target must be an object {"kind":"window","pid":…,"window_id":…} or {"kind":"desktop","display_id":"primary"}, or null`)
	}
	kind, _ := t["kind"].(string)
	switch kind {
	case "window":
		// Only the form is checked here: the range of the pid and window id derived below
		// is the worker's one check of every call's pid and window_id.
		pid, err := targetID(t, "pid")
		if err != nil {
			return err
		}
		wid, err := targetID(t, "window_id")
		if err != nil {
			return err
		}
		if pid == 0 || wid == 0 {
			return Refuse(CodeWindowNotFound, "target pid %v window_id %v names no window; refresh list_windows", t["pid"], t["window_id"])
		}
		if s, ok := args["scope"]; ok && s != "window" {
			return Refuse(CodeInvalidArguments, "a window target cannot be combined with scope %v", s)
		}
		if r := derive(args, "pid", float64(pid)); r != nil {
			return r
		}
		return derive(args, "window_id", float64(wid))
	case "desktop":
		if id, _ := t["display_id"].(string); id != "primary" {
			return Refuse(CodeUnsupported, "target display_id %v: this release addresses only the \"primary\" display", t["display_id"])
		}
		if _, ok := args["pid"]; ok {
			return Refuse(CodeInvalidArguments, "a desktop target cannot be combined with pid")
		}
		if _, ok := args["window_id"]; ok {
			return Refuse(CodeInvalidArguments, "a desktop target cannot be combined with window_id")
		}
		return derive(args, "scope", "desktop")
	}
	return Refuse(CodeInvalidArguments, `target.kind %v: want "window" or "desktop"`, t["kind"])
}

// targetID reads a non-negative integer field of a target object (below 2^64).
func targetID(t map[string]any, name string) (uint64, *Refusal) {
	f, ok := t[name].(float64)
	if !ok || f < 0 || f > 1<<64-1 || f != float64(uint64(f)) {
		return 0, Refuse(CodeInvalidArguments, "target.%s must be a non-negative integer, not %v", name, t[name])
	}
	return uint64(f), nil
}

// derive sets args[name] to v unless the caller gave a different value for it.
func derive(args map[string]any, name string, v any) *Refusal {
	if old, ok := args[name]; ok && old != v {
		return Refuse(CodeInvalidArguments, "target contradicts %s %v given beside it", name, old)
	}
	args[name] = v
	return nil
}
