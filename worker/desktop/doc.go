// Package desktop registers the X11 desktop tools (list_windows, click, type_text,
// get_desktop_state, …) into the worker's tool registry, with the reference driver's names
// and argument shapes. It adapts package x11: it validates arguments, resolves
// {pid, window_id} targets, turns x11 errors into refusals before any side effect, and
// reports for every action the route that delivered it and whether the effect was verified.
//
// It is not the authorization chokepoint: the worker authorizes every call before a
// handler here runs.
package desktop
