package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// Client is a Go client of a `cua-host serve` control stream (docs/serve.md): it writes
// JSON-RPC requests to the host's standard input and reads responses and notifications
// from its standard output, one object per line. A Go program that runs `cua-host serve`
// as a child (or Server.Run over a pipe) drives it through a Client instead of writing
// JSON itself; apps in other languages speak the same protocol.
//
// Build it with NewClient over the two streams. Its methods are safe for concurrent use;
// each waits for its own clientLine or its ctx. Notifications (consent_request,
// session_ended, worker_exited) go to ClientOptions.OnNotification. Close gives the host
// end-of-file, which revokes every session unless the host runs with --keep-after-eof.
type Client struct {
	w    io.WriteCloser
	opts ClientOptions

	// writeMu serialises writes of whole lines.
	writeMu sync.Mutex

	// mu guards the fields below.
	mu      sync.Mutex
	next    uint64
	pending map[uint64]chan clientLine
	err     error // why the stream ended; set once done is closed

	done chan struct{}
}

// ClientOptions configure NewClient.
type ClientOptions struct {
	// OnNotification, when set, receives every notification the host sends, in order, on
	// the client's reader goroutine: it must return promptly (answer a consent_request
	// from another goroutine). ConsentRequest is the params of consent_request.
	OnNotification func(method string, params json.RawMessage)
}

// clientLine is one line the host writes: a response or a notification.
type clientLine struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

// ErrClientClosed reports a request on a stream that has ended.
var ErrClientClosed = errors.New("serve: the control stream has ended")

// NewClient returns a client writing requests to w (the host's standard input) and
// reading from r (its standard output). It reads r until it ends; Close closes w.
func NewClient(r io.Reader, w io.WriteCloser, opts ClientOptions) *Client {
	c := &Client{w: w, opts: opts, pending: map[uint64]chan clientLine{}, done: make(chan struct{})}
	go c.read(r)
	return c
}

// read delivers every line of r to the request waiting for it or to OnNotification.
func (c *Client) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	var err error
	for {
		var line []byte
		if line, err = br.ReadBytes('\n'); err != nil {
			break
		}
		var resp clientLine
		if json.Unmarshal(line, &resp) != nil {
			continue // not ours to judge: the host writes one object per line
		}
		if resp.ID == nil {
			if resp.Method != "" && c.opts.OnNotification != nil {
				c.opts.OnNotification(resp.Method, resp.Params)
			}
			continue
		}
		id, perr := strconv.ParseUint(string(resp.ID), 10, 64)
		if perr != nil {
			continue // an id this client never sends
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- resp
		}
	}
	if errors.Is(err, io.EOF) {
		err = ErrClientClosed
	}
	c.mu.Lock()
	c.err = fmt.Errorf("serve: reading the control stream: %w", err)
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.mu.Unlock()
	close(c.done)
}

// Done is closed once the host's output has ended (it exited, or closed its output).
func (c *Client) Done() <-chan struct{} { return c.done }

// Call sends one request and decodes its result into result (nil discards it). A
// JSON-RPC error from the host is returned as *Error.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	ch := make(chan clientLine, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, err)
	}
	c.next++
	id := c.next
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	req := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	line, err := json.Marshal(req)
	if err != nil {
		forget()
		return fmt.Errorf("%s: encode params: %w", method, err)
	}
	c.writeMu.Lock()
	_, err = c.w.Write(append(line, '\n'))
	c.writeMu.Unlock()
	if err != nil {
		forget()
		return fmt.Errorf("%s: write request: %w", method, err)
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			c.mu.Lock()
			err := c.err
			c.mu.Unlock()
			return fmt.Errorf("%s: the host ended before answering: %w", method, err)
		}
		if resp.Error != nil {
			return resp.Error
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(resp.Result, result); err != nil {
			return fmt.Errorf("%s: decode result: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		forget()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// CreateSessionParams are create_session's parameters (docs/serve.md); zero values are
// left out, so the host's defaults apply.
type CreateSessionParams struct {
	Label string `json:"label,omitempty"`
	// Mode is "standard", "bounded" or "unrestricted".
	Mode string `json:"mode,omitempty"`
	// Manifest is a bounded manifest: a file path or the YAML itself.
	Manifest string `json:"manifest,omitempty"`
	// TTL and IdleTTL are the session's lifetimes; zero means the host's maximum.
	TTL     time.Duration `json:"-"`
	IdleTTL time.Duration `json:"-"`
	// Display is "private", a display name (":N") or empty for the host's default;
	// TrustDomain names the trust domain the session joins.
	Display     string `json:"display,omitempty"`
	TrustDomain string `json:"trust_domain,omitempty"`
	// HTTP also serves the session over loopback HTTP.
	HTTP                       bool     `json:"http,omitempty"`
	DangerouslyBypassApprovals bool     `json:"dangerously_bypass_approvals,omitempty"`
	Tools                      []string `json:"tools,omitempty"`
	ExcludeTools               []string `json:"exclude_tools,omitempty"`
}

// MarshalJSON writes the lifetimes as Go duration strings, the way the host reads them.
func (p CreateSessionParams) MarshalJSON() ([]byte, error) {
	type plain CreateSessionParams
	out := struct {
		plain
		TTL     string `json:"ttl,omitempty"`
		IdleTTL string `json:"idle_ttl,omitempty"`
	}{plain: plain(p)}
	if p.TTL > 0 {
		out.TTL = p.TTL.String()
	}
	if p.IdleTTL > 0 {
		out.IdleTTL = p.IdleTTL.String()
	}
	return json.Marshal(out)
}

// CreateSession creates a session and returns it, its endpoint included.
func (c *Client) CreateSession(ctx context.Context, p CreateSessionParams) (SessionInfo, error) {
	var info SessionInfo
	err := c.Call(ctx, "create_session", p, &info)
	return info, err
}

// RevokeSession ends one session and returns the labels revoked.
func (c *Client) RevokeSession(ctx context.Context, label string) ([]string, error) {
	var out struct {
		Revoked []string `json:"revoked"`
	}
	err := c.Call(ctx, "revoke_session", map[string]string{"session": label}, &out)
	return out.Revoked, err
}

// RevokeAll ends every session and returns the labels revoked.
func (c *Client) RevokeAll(ctx context.Context) ([]string, error) {
	var out struct {
		Revoked []string `json:"revoked"`
	}
	err := c.Call(ctx, "revoke_all", nil, &out)
	return out.Revoked, err
}

// ListSessions returns the live sessions.
func (c *Client) ListSessions(ctx context.Context) ([]SessionInfo, error) {
	var out struct {
		Sessions []SessionInfo `json:"sessions"`
	}
	err := c.Call(ctx, "list_sessions", nil, &out)
	return out.Sessions, err
}

// Status returns the host's trust domains, displays, sessions and calls in flight.
func (c *Client) Status(ctx context.Context) (Status, error) {
	var st Status
	err := c.Call(ctx, "status", nil, &st)
	return st, err
}

// DecideConsent answers the consent_request with id: granted or not, and for how long a
// grant is reused (zero: this call only).
func (c *Client) DecideConsent(ctx context.Context, id uint64, granted bool, ttl time.Duration) error {
	p := map[string]any{"id": id, "granted": granted}
	if ttl > 0 {
		p["ttl"] = ttl.String()
	}
	return c.Call(ctx, "consent_decision", p, nil)
}

// Close closes the host's input: end-of-file, on which the host revokes every session and
// exits, unless it runs with --keep-after-eof. Requests still waiting fail once the host's
// output ends.
func (c *Client) Close() error { return c.w.Close() }
