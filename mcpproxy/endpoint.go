package mcpproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"
)

// maxEndpointConns bounds the connections a unix-socket endpoint serves at once; more are
// closed on accept.
const maxEndpointConns = 32

// ErrForeignPeer is returned (wrapped) by CheckPeer for a peer that runs as another user.
var ErrForeignPeer = errors.New("mcpproxy: peer runs as another user")

// PeerCred returns the credentials the kernel recorded for the process at the other end
// of c when it connected (SO_PEERCRED): they cannot be forged by the peer.
func PeerCred(c *net.UnixConn) (*unix.Ucred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("peer credentials: %w", err)
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, fmt.Errorf("peer credentials: %w", err)
	}
	if serr != nil {
		return nil, fmt.Errorf("peer credentials: %w", serr)
	}
	return cred, nil
}

// CheckPeer admits a peer whose user id is uid and refuses every other one, root
// included: an endpoint belongs to the user the host runs as.
func CheckPeer(cred *unix.Ucred, uid int) error {
	if cred == nil {
		return fmt.Errorf("%w: no credentials", ErrForeignPeer)
	}
	if int(cred.Uid) != uid {
		return fmt.Errorf("%w: pid %d uid %d, endpoint owner uid %d", ErrForeignPeer, cred.Pid, cred.Uid, uid)
	}
	return nil
}

// ServeUnix serves the proxy on ln, a session endpoint: every accepted connection whose
// peer runs as uid (CheckPeer, before a byte is read) is one MCP session speaking
// newline-delimited JSON-RPC, as MCP's stdio transport does; any other peer is closed at
// once. At most maxEndpointConns connections are served at a time. It returns when ctx
// ends (after closing every connection) or when ln fails. It takes ownership of ln.
func (p *Proxy) ServeUnix(ctx context.Context, ln *net.UnixListener, uid int) error {
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxEndpointConns)
	// mu guards conns.
	var mu sync.Mutex
	conns := map[*net.UnixConn]bool{}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var err error
	for {
		c, aerr := ln.AcceptUnix()
		if aerr != nil {
			if ctx.Err() == nil {
				err = fmt.Errorf("serve endpoint: %w", aerr)
			}
			break
		}
		cred, cerr := PeerCred(c)
		if cerr == nil {
			cerr = CheckPeer(cred, uid)
		}
		if cerr != nil {
			p.log.Warn("endpoint connection refused", "err", cerr)
			c.Close()
			continue
		}
		select {
		case slots <- struct{}{}:
		default:
			p.log.Warn("endpoint connection refused: too many open connections", "max", maxEndpointConns)
			c.Close()
			continue
		}
		mu.Lock()
		conns[c] = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			p.serveConn(ctx, c, cred)
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
		}()
	}
	ln.Close()
	mu.Lock()
	for c := range conns {
		c.Close()
	}
	mu.Unlock()
	wg.Wait()
	return err
}

// serveConn runs one MCP session on c until the peer closes it or ctx ends, then closes c.
func (p *Proxy) serveConn(ctx context.Context, c *net.UnixConn, cred *unix.Ucred) {
	defer c.Close()
	log := p.log.With("peer_pid", cred.Pid)
	log.Debug("endpoint connection")
	ss, err := p.server.Connect(ctx, &mcp.IOTransport{Reader: c, Writer: c, MaxLineLength: maxRequestBody}, nil)
	if err != nil {
		log.Warn("endpoint connection: start MCP session", "err", err)
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ss.Wait()
	}()
	select {
	case <-done:
	case <-ctx.Done():
		ss.Close()
		<-done
	}
	log.Debug("endpoint connection closed")
}
