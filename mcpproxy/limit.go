package mcpproxy

import (
	"log/slog"
	"net"
	"sync"
)

// limitListener serves at most max connections at once: a connection accepted beyond that
// is closed at once, so idle or slow clients cannot pile up file descriptors and
// goroutines in the proxy. Streamable HTTP keeps one long-lived stream per MCP session
// beside its requests, so max must leave room for a few clients.
type limitListener struct {
	net.Listener
	slots chan struct{}
	log   *slog.Logger
}

func newLimitListener(ln net.Listener, max int, log *slog.Logger) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, max), log: log}
}

// Accept returns the next connection while a slot is free; others are closed.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
			l.log.Warn("HTTP connection refused: too many open connections", "remote", c.RemoteAddr(), "max", cap(l.slots))
			c.Close()
		}
	}
}

// limitedConn frees its slot once, when closed.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
