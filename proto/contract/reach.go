package contract

import (
	"fmt"
	"strings"
)

// ClientKind says what kind of client reaches a session, in the reference contract's
// words (get_session reports it; CreateSession.client_kind carries it). It grants nothing.
type ClientKind string

// Client kinds.
const (
	ClientCLI           ClientKind = "cli"
	ClientDirect        ClientKind = "direct"
	ClientMCP           ClientKind = "mcp"
	ClientPythonSDK     ClientKind = "python_sdk"
	ClientTypeScriptSDK ClientKind = "typescript_sdk"
)

// ClientKinds lists every client kind, in the order error messages name them.
var ClientKinds = []ClientKind{ClientCLI, ClientDirect, ClientMCP, ClientPythonSDK, ClientTypeScriptSDK}

// Transport says how a session is reached, in the reference contract's words
// (get_session reports it; CreateSession.transport carries it). It grants nothing.
type Transport string

// Transports.
const (
	TransportCLI      Transport = "cli"
	TransportDaemon   Transport = "daemon"
	TransportMCPStdio Transport = "mcp_stdio"
	TransportMCPHTTP  Transport = "mcp_http"
)

// Transports lists every transport, in the order error messages name them.
var Transports = []Transport{TransportCLI, TransportDaemon, TransportMCPStdio, TransportMCPHTTP}

// ParseClientKind reads CreateSession.client_kind: empty means ClientDirect (a program
// embedding the host); anything but a known kind is an error.
func ParseClientKind(s string) (ClientKind, error) {
	if s == "" {
		return ClientDirect, nil
	}
	for _, k := range ClientKinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("client_kind %q: want %s", s, orList(ClientKinds))
}

// ParseTransport reads CreateSession.transport: empty means TransportDaemon (the host's
// own channel); anything but a known transport is an error.
func ParseTransport(s string) (Transport, error) {
	if s == "" {
		return TransportDaemon, nil
	}
	for _, t := range Transports {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("transport %q: want %s", s, orList(Transports))
}

// orList spells vs as "a, b or c".
func orList[T ~string](vs []T) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = string(v)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
