// Package display runs a private X display for one trust domain: Xvfb with a fresh
// MIT-MAGIC-COOKIE in a private Xauthority file, optionally an EWMH window manager
// (openbox) and a private D-Bus session bus, all children of this process in their own
// process groups, torn down together by Close.
//
// It is not an X client library: it speaks just enough of the X protocol (connection
// setup, InternAtom, GetProperty) to know when the server and the window manager are
// ready, without touching this process's environment.
package display
