package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	cuav1 "github.com/cua-host/cua-host/proto/cua/v1"
	"github.com/cua-host/cua-host/proto/wire"
)

// ErrClosed is returned (wrapped) when the session channel is gone.
var ErrClosed = errors.New("client: session channel closed")

// cancelGrace is how long Call waits for the worker's own answer after forwarding a
// cancellation, so that a call cancelled before dispatch can still be reported NOT_STARTED.
const cancelGrace = 200 * time.Millisecond

// Conn is the caller's end of one session channel. It is safe for concurrent use.
type Conn struct {
	sc         *wire.SessionConn
	generation []byte
	version    uint32
	log        *slog.Logger
	done       chan struct{} // closed when the reader stops

	// sendMu orders request ids on the wire: an id is allocated and written under it, so
	// ids reach the worker strictly increasing.
	sendMu sync.Mutex
	nextID uint64 // guarded by sendMu

	// mu guards the fields below.
	mu      sync.Mutex
	pending map[uint64]chan *cuav1.Envelope
	err     error // why the channel ended; set once
}

// Options configures a Conn.
type Options struct {
	// Generation is the worker's 16-byte generation.
	Generation []byte
	// Version is the negotiated protocol version.
	Version uint32
	// Logger, when nil, discards logs.
	Logger *slog.Logger
}

// New starts a client on one end of a session channel. It takes ownership of f.
func New(f *os.File, opts Options) (*Conn, error) {
	sc, err := wire.NewSessionConn(f)
	if err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Conn{
		sc:         sc,
		generation: append([]byte(nil), opts.Generation...),
		version:    opts.Version,
		log:        opts.Logger,
		done:       make(chan struct{}),
		pending:    map[uint64]chan *cuav1.Envelope{},
	}
	go c.read()
	return c, nil
}

// Done is closed when the channel has ended (the worker closed it, died, or Close ran).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err reports why the channel ended, or nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the channel; calls in flight end with outcome UNKNOWN. It is idempotent and
// waits for the reader to stop.
func (c *Conn) Close() error {
	err := c.sc.Close()
	<-c.done
	return err
}

func (c *Conn) read() {
	defer close(c.done)
	for {
		env, err := c.sc.Recv()
		if err != nil {
			c.fail(err)
			return
		}
		switch env.GetBody().(type) {
		case *cuav1.Envelope_ToolResult, *cuav1.Envelope_ToolList:
		default:
			c.fail(&wire.ViolationError{Reason: "unexpected_kind", Detail: "the worker sent a request-kind envelope"})
			c.sc.Close()
			return
		}
		c.mu.Lock()
		ch := c.pending[env.GetRequestId()]
		delete(c.pending, env.GetRequestId())
		c.mu.Unlock()
		if ch == nil {
			c.log.Debug("reply for no pending request", "request_id", env.GetRequestId())
			continue
		}
		ch <- env
	}
}

func (c *Conn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = fmt.Errorf("%w: %v", ErrClosed, err)
	}
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
}

// send allocates the next request id, registers a reply channel when want is true, and
// writes the envelope. It returns the id and whether any byte was written.
func (c *Conn) send(ctx context.Context, env *cuav1.Envelope, want bool) (id uint64, ch chan *cuav1.Envelope, written bool, err error) {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return 0, nil, false, err
	}
	c.nextID++
	id = c.nextID
	if want {
		ch = make(chan *cuav1.Envelope, 1)
		c.pending[id] = ch
	}
	c.mu.Unlock()

	env.ProtocolVersion = c.version
	env.RequestId = id
	env.Generation = c.generation
	if d, ok := ctx.Deadline(); ok {
		env.DeadlineUnixMs = d.UnixMilli()
		if env.DeadlineUnixMs == 0 {
			env.DeadlineUnixMs = 1
		}
	}
	if err := c.sc.Send(env); err != nil {
		c.forget(id)
		var se *wire.SendError
		if errors.As(err, &se) {
			return id, nil, se.Written > 0, err
		}
		return id, nil, false, err
	}
	return id, ch, true, nil
}

func (c *Conn) forget(id uint64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// Call runs one tool and returns its result. The result's Outcome is always set; err is
// non-nil when the channel failed (then Outcome is NotStarted or Unknown by the rules of
// docs/protocol.md). A refusal or a tool-level error is a result, not an error.
func (c *Conn) Call(ctx context.Context, name string, args json.RawMessage) (Result, error) {
	if err := ctx.Err(); err != nil {
		return notStarted(ctxCode(err), "the call's context ended before it was sent"), err
	}
	env := &cuav1.Envelope{Body: &cuav1.Envelope_CallTool{CallTool: &cuav1.CallTool{Name: name, Arguments: args}}}
	id, ch, written, err := c.send(ctx, env, true)
	if err != nil {
		if written {
			return unknown("the session channel broke while the request was being written"), err
		}
		var v *wire.SendError
		if !errors.As(err, &v) && !errors.Is(err, ErrClosed) {
			return notStarted(CodeInvalidRequest, err.Error()), err
		}
		return notStarted(CodeWorkerUnavailable, "the worker is gone; the request was not sent"), err
	}
	env, err = c.await(ctx, id, ch)
	if err != nil {
		return unknown(err.Error()), err
	}
	if l := env.GetToolResult(); l != nil {
		return resultFromProto(l)
	}
	return unknown("the worker answered a call with a tool list"), fmt.Errorf("unexpected reply kind")
}

// ListTools returns the tools this session may call.
func (c *Conn) ListTools(ctx context.Context) ([]ToolInfo, error) {
	env := &cuav1.Envelope{Body: &cuav1.Envelope_ListTools{ListTools: &cuav1.ListTools{}}}
	id, ch, _, err := c.send(ctx, env, true)
	if err != nil {
		return nil, fmt.Errorf("list tools: %w", err)
	}
	env, err = c.await(ctx, id, ch)
	if err != nil {
		return nil, fmt.Errorf("list tools: %w", err)
	}
	if r := env.GetToolResult(); r != nil {
		return nil, fmt.Errorf("list tools refused: %s: %s", r.GetRefusal().GetCode(), r.GetRefusal().GetMessage())
	}
	var out []ToolInfo
	for _, t := range env.GetToolList().GetTools() {
		out = append(out, ToolInfo{Name: t.GetName(), Description: t.GetDescription(), InputSchema: t.GetInputSchema(), Annotations: t.GetAnnotations()})
	}
	return out, nil
}

// await waits for the reply to id. When ctx ends first it forwards a Cancel and gives the
// worker a short grace period to answer for itself.
func (c *Conn) await(ctx context.Context, id uint64, ch chan *cuav1.Envelope) (*cuav1.Envelope, error) {
	select {
	case env, ok := <-ch:
		if !ok {
			return nil, c.Err()
		}
		return env, nil
	case <-ctx.Done():
	}
	cancelEnv := &cuav1.Envelope{Body: &cuav1.Envelope_Cancel{Cancel: &cuav1.Cancel{RequestId: id}}}
	if _, _, _, err := c.send(context.WithoutCancel(ctx), cancelEnv, false); err != nil {
		c.log.Debug("forward cancel", "request_id", id, "err", err)
	}
	t := time.NewTimer(cancelGrace)
	defer t.Stop()
	select {
	case env, ok := <-ch:
		if !ok {
			return nil, c.Err()
		}
		return env, nil
	case <-t.C:
		c.forget(id)
		return nil, fmt.Errorf("no answer after cancelling: %w", ctx.Err())
	}
}

func ctxCode(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return CodeDeadlineExceeded
	}
	return CodeCanceled
}
