// Package doctor checks whether a machine has what `cua-host run` needs, and says what is
// missing, what that means for the modes and displays, and which Debian packages provide
// it: the X display a session would drive (reachable with the cookie an X client started
// from this environment sends, and its extensions), how that display admits clients,
// which input devices can answer the person's windows on it, its window manager, the
// accessibility bus, the sandbox of launched programs, and the programs private and
// nested displays are made of.
//
// Run returns a Report; `cua-host doctor` prints it and exits 1 when a check the default
// `run` needs is missing. The one thing Run starts is the private display `run` itself
// would start when there is no display to share (Xvfb, openbox and a session bus), so
// that the report says what that display offers rather than what it should; it is torn
// down before Run returns.
//
// It is not a configuration check: the permission mode, policy layers and manifest are
// `cua-host status`'s business. It changes nothing on the machine.
package doctor
