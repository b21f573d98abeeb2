// Package desktop registers the X11 desktop tools (list_windows, click, type_text,
// get_desktop_state, …) into the worker's tool registry, with the reference driver's names
// and argument shapes. It adapts package x11: it validates arguments, resolves
// {pid, window_id} targets, turns x11 errors into refusals before any side effect, and
// reports for every action the route that delivered it and whether the effect was verified.
//
// The accessibility tools (get_window_state, get_accessibility_tree, set_value) read and
// act through package x11/atspi. get_window_state returns element tokens that click,
// double_click, right_click, type_text, set_value and scroll accept instead of
// coordinates; tokens are kept per session (a token of another session is unknown) and
// per window (a newer snapshot makes the older tokens stale). An element action goes
// through AT-SPI when the element offers a route, without moving the pointer or the
// focus, and falls back to pointer input at the element's centre otherwise.
//
// verify_state samples one window (its existence and frame, and its accessible elements)
// every 100 ms until its predicates hold for stable_samples samples in a row or its wait
// ends; an unmet verification is a result (unsatisfied or unknown), not an error, and its
// walks never replace the session's snapshots. invoke_menu resolves a menu path in the
// window's menu bar one level at a time, as the application reports it at that moment, and
// invokes the last item through AT-SPI only: a path that does not fit is refused naming the
// segment, with the menus it opened closed again.
//
// Captures of a window (zoom, get_window_state's screenshot) show only the window's own
// process and the processes the calling session launched; windows of everyone else that
// cover it are painted grey, in every mode, and the result says how much was masked.
// get_desktop_state is whole-display observation, authorized as such, and is not masked.
//
// It is not the authorization chokepoint: the worker authorizes every call before a
// handler here runs.
package desktop
