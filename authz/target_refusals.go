package authz

// The refusals of a call's target arguments that both the resolver (before the decision)
// and the handler (before it sends anything) can find: one text each, here.

// DesktopScopeWithWindow refuses scope "desktop" given with pid or window_id.
func DesktopScopeWithWindow() *Refusal {
	return Refuse(CodeInvalidArguments, "scope \"desktop\" takes no pid or window_id")
}

// WindowWithoutPID refuses window_id given without the pid that owns it.
func WindowWithoutPID() *Refusal {
	return Refuse(CodeInvalidArguments, "window_id needs the pid that owns it")
}

// DesktopScopeRequired refuses coordinates given without a window and without scope
// "desktop": they would be desktop coordinates, which the caller must confirm.
func DesktopScopeRequired() *Refusal {
	return Refuse(CodeDesktopCoordinateScopeRequired, "x/y without pid and window_id are desktop coordinates; pass scope:\"desktop\" (or target {\"kind\":\"desktop\",\"display_id\":\"primary\"}) to confirm, or target a window")
}
