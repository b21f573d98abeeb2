// Package serve is `cua-host serve`: a host whose control API is JSON-RPC 2.0 on a byte
// stream (one object per line, the way MCP's stdio transport frames messages), so that an
// app in any language can run supervised workers by holding a pipe.
//
// The app creates sessions; each session belongs to a trust domain, and each trust domain
// is one worker and one display (a private Xvfb, or a display the app names) that its
// sessions share and no other domain ever does. Every session is reached through its own
// endpoint: an MCP proxy process serving a unix socket in a 0700 directory of the host's
// user (peers of other users are refused with SO_PEERCRED), and on request a loopback HTTP
// listener with a bearer token the host minted. The endpoint carries that session's
// authority and nothing else; the control stream carries everything the app may do.
//
// End-of-file on the control stream revokes every session and stops every worker, proxy
// and private display, and removes every endpoint: the same promise as the worker's
// control channel. The protocol: docs/serve.md; the design: docs/adr/0009-serve-endpoints.md.
//
// It is not an MCP server itself (the proxies are) and never parses an agent's input.
package serve
