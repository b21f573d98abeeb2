package worker

import "runtime"

// useOneThread makes the worker run Go code on one thread (GOMAXPROCS 1) unless the
// environment sets GOMAXPROCS (getenv), which the host passes through (host/env.go).
//
// A worker's calls are chains of round trips — to the X server, the accessibility bus,
// the session channel — and every answer wakes the goroutine waiting for it. With more
// than one thread each such wake hands work from one thread to another through the
// kernel, which on small virtual machines costs more than the work it hands over: a
// background click through the whole stack took 0.25 ms longer with two threads than
// with one (docs/adr/0018). The CPU-bound parts (a screenshot's scaling and encoding)
// measured the same either way.
func useOneThread(getenv func(string) string) {
	if getenv("GOMAXPROCS") != "" {
		return // the runtime read it at start
	}
	runtime.GOMAXPROCS(1)
}
