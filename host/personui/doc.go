// Package personui draws the windows a person uses to govern agent sessions on a shared
// display: the consent dialog (Ask) and the active-session indicator with its Stop button
// and stop key (Indicator). The trusted host draws them itself, as an X client of its own in
// its own process, so that every one of these windows belongs to the host's pid — which the
// worker already protects: no session input may reach them and no capture may show them.
//
// # What answers
//
// The windows are made to be answered by a person and not by anything else on the display:
//
//   - only the primary mouse button answers the dialog, pressed and released on the same
//     button by the same devices; keys never do, and the windows never ask for the keyboard
//     focus. Stop is that click on the bar's button, or StopKey (Ctrl+Alt+Shift+Esc, grabbed
//     on the root for every master keyboard and every lock state);
//   - clicks and the stop key are read as XInput2 events (the windows select no core button
//     or key events), which name the master device and the slave device (the source) that
//     produced them. A client cannot forge an XI2 event with SendEvent, and every core event
//     another client sends is dropped before it is read, but ClientMessage (the window
//     manager's WM_DELETE_WINDOW: closing the dialog denies) and ConfigureNotify (it only
//     makes a window read its position from the server again);
//   - no event counts through a cua-host session's own master devices (named by
//     xinput2.SeatName) or from a slave attached to one;
//   - on a display with physical input devices — any slave that is neither an XTEST device
//     (the server's undeletable "XTEST Device" property, or its " XTEST pointer/keyboard"
//     name) nor Xvfb's inert "Xvfb mouse"/"Xvfb keyboard", attached, floating or disabled —
//     only events whose source is a physical device count: xdotool and every other XTEST
//     client go through an XTEST slave and are ignored. A program can float or disable a
//     device but not remove one, so it cannot turn such a display into the next kind;
//   - on a display without any (Xvfb; a VNC server that injects the person's input through
//     XTEST) the windows cannot tell the person from a program: XTEST events count there,
//     except through a session's devices. ProbeInput reports which kind a display is
//     (InputFacts.Kind, "physical" or "xtest_only") so that the host can warn;
//   - a press counts only when it comes at least ArmDelay (500 ms) after the window was last
//     seen fully visible and top-most, by the X server's clock: a click already on its way to
//     that spot when the window appeared, moved or came out from under another window cannot
//     answer it.
//
// What the physical rule does not stop: XTEST's FakeInput accepts an XI1 device event for
// any device id, a physical slave's included, and the server then reports the event as that
// device's (checked on X.Org 21.1: a DeviceButtonPress faked for "Xvfb mouse" arrives with
// it as the source). A program written to do that, with a trusted connection to the
// display, can still answer; xdotool and the sessions' own devices cannot.
//
// # Top-most
//
// Both windows watch the stacking of every top-level window (SubstructureNotify on the
// root: every map, move, resize and restack, override-redirect windows included). After
// each change they read the stacking order and geometry from the server (QueryTree,
// GetGeometry) and when any viewable window above theirs overlaps their area — an
// InputOnly one included, since it takes the clicks — they restack themselves above it
// directly, not through the window manager: the indicator is override-redirect; the
// dialog's window-manager frame is given the override-redirect attribute so that the
// request is not redirected, and override-redirect windows that covered the dialog are sent
// to the bottom, because the window manager, on a click, raises its frames only to just
// under override-redirect windows (openbox: under its own reference window) and replays the
// click to what is then on top. A covered window ignores clicks and arms anew once
// uncovered. When the window is still covered CoverBudget (100 ms) after it was first found
// covered — or when something raised itself over it more than ten times within a second —
// the dialog answers Deny (ErrCovered) and the indicator calls its onCovered callback, on
// which the host revokes every session, as Stop does: fail closed. Windows of this process
// do not count as covering each other (the dialog may cover the bar); windows of another
// cua-host process do, so two hosts whose bars overlap on one display revoke each other's
// sessions.
//
// The dialog stays a managed window (a dialog in the "above" state): the window manager
// lists it in _NET_CLIENT_LIST_STACKING, where the worker finds protected windows, and can
// close it (a Deny). The indicator is override-redirect and so not in that list: the worker
// finds it as protected by asking the server which window is on top at a point and which
// process created it (X-Resource), and whole-display captures hide it by that process.
// What remains out of reach: a focused full-screen managed window is raised above the
// dialog by the window manager at each click on the dialog, so the dialog cannot be
// answered by a click while one overlaps it (it times out: Deny); the bar and its stop key
// are not affected.
//
// # Text and connection
//
// Every piece of text that comes from the request is reduced to printable Latin-1, escaped
// and cut to one line (a command line to a few), so a window title cannot draw a line of its
// own into the dialog. Text is drawn with core X fonts ("fixed" is built into every X
// server), so the package needs no toolkit and no process of its own. It connects with the
// display name and Xauthority file it is given and never reads DISPLAY or XAUTHORITY
// itself; like Xlib, it sends no cookie when the file is missing or has no entry for the
// display (a server started without -auth admits every local client), and says so when the
// server then refuses. It needs XInput 2.2.
//
// The package is not a policy: it does not decide what needs asking, remember answers or
// protect its windows from other X clients (the worker does that for sessions, see
// docs/security.md).
package personui
