// Package safefile reads and writes a file in a directory that is opened once, from "/",
// without following symbolic links, and then used by descriptor: the file is created,
// replaced, read or examined relative to that open directory, never by walking its path
// again. A path that was checked once therefore cannot be redirected between the check
// and the write or read by a symbolic link swapped in for one of its directories: the
// open fails (ErrSymlink) or the file lands in the directory that was opened.
//
// It needs openat2 (Linux 5.6 or later) and fails closed without it (ErrUnsupported); it
// never falls back to a walk that follows links.
//
// It is not for deciding which paths may be used (the worker's authorizer does that), not
// for paths with symbolic links in them (resolve them first; the canonical path is what
// is opened), and not for keeping a directory open across calls.
package safefile
