package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
)

// runMCPConnect is `cua-host mcp-connect ENDPOINT`: a stdio MCP server for clients that
// start a command, relaying bytes between stdin/stdout and a session's unix-socket
// endpoint. It holds no authority of its own: it parses nothing, and what it can reach is
// what the endpoint it was given can. It exits when either side closes.
func runMCPConnect(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(stdout, "usage: cua-host mcp-connect ENDPOINT   (a session's unix socket, from create_session or `cua-host session start`)")
		return 0
	}
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: cua-host mcp-connect ENDPOINT")
		return 2
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", args[0])
	if err != nil {
		fmt.Fprintf(stderr, "cua-host mcp-connect: %v\n", err)
		return 1
	}
	conn := c.(*net.UnixConn)
	defer conn.Close()
	down := make(chan error, 1)
	go func() {
		_, err := io.Copy(stdout, conn)
		down <- err
	}()
	up := make(chan error, 1)
	go func() {
		_, err := io.Copy(conn, os.Stdin)
		_ = conn.CloseWrite() // the endpoint sees end-of-file and ends the MCP session
		up <- err
	}()
	select {
	case err = <-down: // the endpoint closed: the session ended, or was revoked
	case err = <-up:
		if err == nil {
			err = <-down
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "cua-host mcp-connect: %v\n", err)
		return 1
	}
	return 0
}
