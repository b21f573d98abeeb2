// Package client speaks the session channel from the caller's side: it numbers requests,
// stamps them with the worker's generation and a deadline, matches replies, forwards
// cancellation, and — when the worker cannot answer — synthesizes the outcome the protocol
// allows the caller to rely on (docs/protocol.md): NOT_STARTED only when provably nothing
// reached the worker, UNKNOWN when it may have, and COMPLETED only on the worker's word.
//
// The host's Go API (package host) and the MCP proxy are both built on it.
package client
