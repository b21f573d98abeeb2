// Package contract holds the constants and the one small format that the trusted host and
// the processes it spawns (the worker, the MCP proxy) and the session-channel callers
// (package client) must agree on across the process boundary: the descriptor numbers at
// which children inherit their channels, the protocol version range, the length of a
// worker generation, the proxy bootstrap line, and the protocol-level refusal codes a
// caller synthesizes on its side.
//
// It sits beside proto/wire and imports nothing of cua-host but proto, so that the
// untrusted side (the MCP proxy, which parses an agent's input) and library callers can
// depend on it without depending on the host, the worker, authz or policy.
//
// It is not for framing (proto/wire) nor for the refusal codes that only the worker's
// authorization pipeline decides (authz); the .proto files remain the source of truth for
// fields.
package contract
