// Package wire frames cua-host's protobuf messages on the two kinds of channel the host,
// the worker and the MCP proxy share, and passes file descriptors between them.
//
// The control channel (host ↔ worker) is an AF_UNIX SOCK_SEQPACKET socketpair: one
// ControlFrame per datagram, at most MaxControlFrame bytes, with SCM_RIGHTS allowed only on
// CreateSession. A session channel (proxy or SDK ↔ worker) is an AF_UNIX SOCK_STREAM
// socketpair carrying a u32 big-endian length followed by one Envelope of at most
// MaxSessionFrame bytes, and never any file descriptor.
//
// Decoding is strict: an unknown frame kind, an unknown field, a missing protocol version,
// a truncated or oversized frame, or a file descriptor where none belongs is a
// *ViolationError, and every descriptor that arrived with the offending frame is closed
// before the error is returned. The package knows nothing of version negotiation, sessions
// or tools; the endpoints built on it (host, worker, client) do.
package wire
