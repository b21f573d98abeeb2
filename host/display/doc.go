// Package display runs a private X display for one trust domain: Xvfb (headless) or, for a
// nested display, Xephyr drawing into a window on the person's display, with a fresh
// MIT-MAGIC-COOKIE in a private Xauthority file, optionally an EWMH window manager
// (openbox) and a private D-Bus session bus, all children of this process in their own
// process groups, torn down together by Close. A nested display also watches whether the
// person is using its window (WatchPerson).
//
// It is not an X client library: it speaks just enough of the X protocol (connection
// setup, InternAtom, GetProperty) to know when the server and the window manager are
// ready, without touching this process's environment, and, for a nested display, keeps
// one connection to the person's display for its window and the watch.
package display
