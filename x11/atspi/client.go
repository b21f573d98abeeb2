package atspi

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
)

// Defaults for Options.
const (
	// DefaultCallTimeout bounds every D-Bus call to an application. An application that
	// does not answer within it is reported as not responding.
	DefaultCallTimeout = 750 * time.Millisecond
	// DefaultConnectTimeout bounds connecting: the session bus, GetAddress (which may
	// start the bus launcher) and the accessibility bus.
	DefaultConnectTimeout = 5 * time.Second
	// retryAfter is how long a failed connection is remembered before the next try.
	retryAfter = 2 * time.Second
)

// Options configure New.
type Options struct {
	// SessionBusAddress is the D-Bus session bus on which org.a11y.Bus is asked for the
	// accessibility bus; empty means $DBUS_SESSION_BUS_ADDRESS.
	SessionBusAddress string
	// CallTimeout overrides DefaultCallTimeout when positive.
	CallTimeout time.Duration
	// ConnectTimeout overrides DefaultConnectTimeout when positive.
	ConnectTimeout time.Duration
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// Done, when non-nil, closes the client when it is closed (for example the X
	// backend's lifetime, so that a client nobody else owns does not outlive it).
	Done <-chan struct{}
}

// Client is a lazy connection to the accessibility bus. New does no I/O; the first
// operation that needs the bus connects, and a lost connection is re-established on the
// next use. Its methods are safe for concurrent use.
type Client struct {
	sessionAddr    string
	callTimeout    time.Duration
	connectTimeout time.Duration
	log            *slog.Logger

	// connecting is a one-slot semaphore held while (re)connecting, taken with a context.
	connecting chan struct{}

	// mu guards the fields below. Lock order: connecting, then mu.
	mu      sync.Mutex
	conn    *dbus.Conn     // nil until connected, and after a failure or Close
	address string         // the accessibility bus address of conn
	failErr error          // the last connection failure, remembered until failAt+retryAfter
	failAt  time.Time      // when failErr happened
	pids    map[string]int // bus name → pid (unique names are never reused on a bus)
	closed  bool           // set once by Close or Done

	stop      chan struct{} // closed by Close; ends the Done watcher
	closeOnce sync.Once
	wg        sync.WaitGroup // the Done watcher
}

// New returns a client that connects on first use.
func New(opts Options) *Client {
	c := &Client{
		sessionAddr:    opts.SessionBusAddress,
		callTimeout:    DefaultCallTimeout,
		connectTimeout: DefaultConnectTimeout,
		log:            opts.Logger,
		connecting:     make(chan struct{}, 1),
		pids:           map[string]int{},
		stop:           make(chan struct{}),
	}
	if c.sessionAddr == "" {
		c.sessionAddr = os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	}
	if opts.CallTimeout > 0 {
		c.callTimeout = opts.CallTimeout
	}
	if opts.ConnectTimeout > 0 {
		c.connectTimeout = opts.ConnectTimeout
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if opts.Done != nil {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			select {
			case <-opts.Done:
				c.shutdown()
			case <-c.stop:
			}
		}()
	}
	return c
}

// Configured reports whether a session bus is configured at all, and a one-line detail,
// without connecting.
func (c *Client) Configured() (ok bool, detail string) {
	if c.sessionAddr == "" {
		return false, "DBUS_SESSION_BUS_ADDRESS is not set: no session bus, no accessibility bus"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return false, "closed"
	case c.conn != nil:
		return true, "connected to " + c.address
	case c.failErr != nil:
		return true, "last connection attempt failed: " + c.failErr.Error()
	}
	return true, "connects to the accessibility bus on first use"
}

// CallTimeout returns the per-call timeout.
func (c *Client) CallTimeout() time.Duration { return c.callTimeout }

// Close closes the connection. It is idempotent; operations afterwards fail with ErrClosed.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		close(c.stop)
		c.shutdown()
	})
	c.wg.Wait()
	return nil
}

func (c *Client) shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

// bus returns the connection, connecting when there is none.
func (c *Client) bus(ctx context.Context) (*dbus.Conn, error) {
	if conn, err, done := c.current(); done {
		return conn, err
	}
	select {
	case c.connecting <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.connecting }()
	if conn, err, done := c.current(); done { // someone else connected meanwhile
		return conn, err
	}
	conn, addr, err := c.connect(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		if conn != nil {
			conn.Close()
		}
		return nil, ErrClosed
	}
	if err != nil {
		if ctx.Err() == nil { // a cancelled caller says nothing about the bus
			c.failErr, c.failAt = err, time.Now()
		}
		c.log.Debug("atspi connect failed", "err", err)
		return nil, err
	}
	c.conn, c.address, c.failErr = conn, addr, nil
	c.pids = map[string]int{}
	c.log.Debug("atspi connected", "address", addr)
	return conn, nil
}

// current returns the live connection or a remembered failure; done is false when the
// caller should connect.
func (c *Client) current() (conn *dbus.Conn, err error, done bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return nil, ErrClosed, true
	case c.conn != nil && c.conn.Connected():
		return c.conn, nil, true
	case c.conn != nil: // lost: the bus went away
		c.conn.Close()
		c.conn = nil
	case c.failErr != nil && time.Since(c.failAt) < retryAfter:
		return nil, c.failErr, true
	}
	return nil, nil, false
}

// connect asks the session bus for the accessibility bus and connects to it.
func (c *Client) connect(ctx context.Context) (*dbus.Conn, string, error) {
	if c.sessionAddr == "" {
		return nil, "", fmt.Errorf("%w: DBUS_SESSION_BUS_ADDRESS is not set", ErrNoBus)
	}
	ctx, cancel := context.WithTimeout(ctx, c.connectTimeout)
	defer cancel()
	addr, err := BusAddress(ctx, c.sessionAddr)
	if err != nil {
		return nil, "", err
	}
	conn, err := dial(ctx, addr)
	if err != nil {
		return nil, "", fmt.Errorf("%w: accessibility bus %s: %v", ErrNoBus, addr, err)
	}
	return conn, addr, nil
}

// BusAddress asks the session bus at sessionAddr for the address of the accessibility bus
// (org.a11y.Bus.GetAddress), which starts it when it is not running.
func BusAddress(ctx context.Context, sessionAddr string) (string, error) {
	sess, err := dial(ctx, sessionAddr)
	if err != nil {
		return "", fmt.Errorf("%w: session bus %s: %v", ErrNoBus, sessionAddr, err)
	}
	defer sess.Close()
	var addr string
	err = sess.Object("org.a11y.Bus", "/org/a11y/bus").CallWithContext(ctx, "org.a11y.Bus.GetAddress", 0).Store(&addr)
	if err != nil {
		return "", fmt.Errorf("%w: org.a11y.Bus.GetAddress on the session bus: %v", ErrNoBus, err)
	}
	if addr == "" {
		return "", fmt.Errorf("%w: org.a11y.Bus.GetAddress returned no address", ErrNoBus)
	}
	return addr, nil
}

// dial connects and authenticates to a bus. A server that does not finish the handshake
// before ctx ends has its connection closed, which ends the handshake.
func dial(ctx context.Context, addr string) (*dbus.Conn, error) {
	conn, err := dbus.Dial(addr)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() {
		err := conn.Auth(nil)
		if err == nil {
			err = conn.Hello()
		}
		done <- err
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		conn.Close()
		<-done
		err = ctx.Err()
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}
