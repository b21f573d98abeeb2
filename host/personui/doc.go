// Package personui draws the windows a person uses to govern agent sessions on a shared
// display: the consent dialog (Ask) and the active-session indicator with its Stop button
// (Indicator). The trusted host draws them itself, as an X client of its own in its own
// process, so that every one of these windows belongs to the host's pid — which the worker
// already protects: no session input may reach them and no capture may show them.
//
// The windows are made to be answered by a person and not by anything else on the display:
//
//   - only the mouse answers: key events are ignored, and the windows never ask for the
//     keyboard focus;
//   - a button acts only when the primary button is pressed and released on it;
//   - a press counts only when it comes at least ArmDelay (500 ms) after the window was last
//     seen fully visible, by the X server's clock: a click already on its way to that spot
//     when the window appeared, moved or came out from under another window cannot answer it;
//   - every piece of text that comes from the request is reduced to printable Latin-1,
//     escaped and cut to one line (a command line to a few), so a window title cannot draw a
//     line of its own into the dialog.
//
// Text is drawn with core X fonts ("fixed" is built into every X server), so the package
// needs no toolkit and no process of its own. It connects with the display name and
// Xauthority file it is given and never reads DISPLAY or XAUTHORITY itself.
//
// Both windows are managed by the window manager (a dialog and a dock window, in the
// "above" state), not override-redirect. The worker finds protected windows, and the
// windows a capture must mask, in _NET_CLIENT_LIST_STACKING, which lists managed windows
// only: an override-redirect dialog would be invisible to it, and a session's click checked
// against the window below could land on Allow. Measured with openbox: an "above" window
// stays over new, raised and activated normal windows; another "above" window activated
// later, or a focused full-screen window, covers it. A covered window ignores clicks and
// asks to be raised again (which undoes the first case, not the second); an
// override-redirect window was never covered by openbox's own restacking, but is invisible
// to the worker, so the choice is managed.
//
// The package is not a policy: it does not decide what needs asking, remember answers or
// protect its windows from other X clients (the worker does that for sessions, see
// docs/security.md).
package personui
