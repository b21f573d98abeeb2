// Package host is cua-host's trusted supervisor and the Go API desktop apps embed: it
// spawns a private worker per trust domain, hands it the authorization ceiling and the
// policy snapshot over an inherited control channel, mints sessions (each its own
// socketpair, passed to the worker by SCM_RIGHTS), answers the worker's consent requests,
// and revokes and kills it.
//
// Authority is the connection itself: there is no listener, no socket path and no token
// between host, worker and proxy. Closing the Host closes the control channel; the worker
// revokes every session and exits, and the host kills its process group after a short grace
// period.
//
// StartStack starts what `cua-host run` serves an agent with: the MCP proxy, a worker and
// one session bound to the proxy, in the order ADR 0002 requires. The numbers and the
// bootstrap line shared with the worker and the proxy are package contract's
// (proto/contract).
//
// A program that embeds a Host should call SealInheritedFDs at the start of main, before
// it starts goroutines that open files.
package host
