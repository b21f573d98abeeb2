// Package e2e drives the real `cua-host run` as a subprocess with real MCP clients (the
// go-sdk client over stdio and streamable HTTP, and the MCP Inspector CLI from npm) on a
// private Xvfb display, and checks effects with oracles outside the code under test: files
// a terminal wrote, PNG decoding, and the kernel's process table.
//
// The tests need Xvfb, openbox, dbus-daemon and xterm (scripts/setup.sh installs them);
// without them they skip on a laptop and fail when CI is set. The Inspector test needs
// npx and the npm registry (or its cache).
package e2e
