// Package worker is cua-host's runtime: the private process that serves one control channel
// from its trusted host and every session channel the host hands it, and runs tools.
//
// Every tool call from every route reaches the one dispatch point (dispatch.go), where the
// call is checked against its session's immutable context before a handler runs, and where
// the handler's return is turned into an outcome. When the control channel reaches
// end-of-file every session is revoked, in-flight calls are cancelled, held input is
// released, session channels are closed and Run returns.
//
// The worker is not a sandbox: it runs with the user's privileges. It is a chokepoint.
package worker
