// Package x11 is the X11 desktop backend: it lists windows and applications, captures the
// screen, synthesizes pointer and keyboard input through XTEST, launches and stops
// applications, moves windows and reads and writes the clipboard, speaking the X protocol
// with jezek/xgb.
//
// It is not for tools, sessions or authorization: it knows nothing of them and must not
// import authz or worker. Callers (worker/desktop) validate arguments, decide what a
// session may do, and map this package's errors (errors.go) to refusal codes.
//
// A Backend holds one X connection for requests and input, a second one for the
// clipboard, and at most one MIT-SHM segment for captures. Input operations take turns on
// one lock so that sequences never interleave, and every operation that presses a button
// or a key releases it again before it returns, also on error or cancellation.
//
// A window capture shows only the window's own pixels and those of the windows above it
// that the caller's CaptureOptions.MayShow allows; the rest is painted MaskRGB. What lies
// above a window comes from the server's own stacking, read under a short server grab
// (stacking.go); the whole-screen capture is not masked.
package x11
