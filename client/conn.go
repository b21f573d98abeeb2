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
//
// There is no reader goroutine: a caller waiting for its reply takes the reader role, reads
// one envelope, routes it to whichever call it answers, and gives the role back. A lone
// caller therefore reads its own reply with no goroutine handoff, which BenchmarkCallScheme
// measures at about a fifth of a no-op round trip against one reader goroutine per Conn.
// The invariants that make this safe:
//
//   - Who reads: only the holder of the one token in readTok calls sc.Recv (readOne). New
//     puts the token there; nothing else creates one.
//   - When the role passes: a caller takes the token only while it waits for its own reply
//     and that reply has not been routed yet (it checks again after taking the token). It
//     reads exactly one envelope, routes it, and puts the token back before it looks at
//     anything else, so the role never stays with a caller that stopped waiting.
//   - Routing and ordering: ids are allocated and written under sendMu, so they reach the
//     worker strictly increasing; each pending call has its own channel with room for one
//     envelope, so routing never blocks and replies may arrive in any order.
//   - Cancellation: while a caller holds the role, its context's end interrupts its read
//     with an expired read deadline (armInterrupt), which leaves the stream intact; it gives
//     the token back, forwards a Cancel, and waits for the worker's answer like any other
//     caller (cancelGrace).
//   - When no call waits, nothing reads: the worker sends only replies, which wait in the
//     socket until a caller reads them. The channel's end is noticed by the next read (or by
//     Close); fail then closes every pending channel, which wakes every waiting caller.
type Conn struct {
	sc         *wire.SessionConn
	generation []byte
	version    uint32
	log        *slog.Logger

	// readTok holds one token; whoever takes it may call sc.Recv.
	readTok chan struct{}
	// readerDone is closed when the plainReader goroutine returns (nil without one).
	readerDone chan struct{}

	// sendMu orders request ids on the wire: an id is allocated and written under it, so
	// ids reach the worker strictly increasing.
	sendMu sync.Mutex
	nextID uint64 // guarded by sendMu

	// interruptMu guards interruptID: the token holder's call whose context may interrupt
	// its read by setting a read deadline (0: none).
	interruptMu sync.Mutex
	interruptID uint64

	// mu guards the fields below.
	mu      sync.Mutex
	pending map[uint64]chan *cuav1.Envelope
	err     error         // why the channel ended; set once
	done    chan struct{} // closed when err is set
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
		readTok:    make(chan struct{}, 1),
		pending:    map[uint64]chan *cuav1.Envelope{},
		done:       make(chan struct{}),
	}
	if plainReader {
		c.readerDone = make(chan struct{})
		go func() {
			defer close(c.readerDone)
			for c.readOne() == nil {
			}
		}()
		return c, nil
	}
	c.readTok <- struct{}{}
	return c, nil
}

// plainReader, set only by BenchmarkCallScheme, gives a new Conn one reader goroutine
// instead of the reader role: the scheme the role is measured against.
var plainReader bool

// Done is closed once the channel is known to have ended (a read saw its end, or Close ran).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err reports why the channel ended, or nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the channel; calls in flight end with outcome UNKNOWN. It is idempotent.
func (c *Conn) Close() error {
	err := c.sc.Close()
	c.fail(errors.New("closed locally"))
	if c.readerDone != nil {
		<-c.readerDone
	}
	return err
}

// fail records why the channel ended and wakes every waiting call.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = fmt.Errorf("%w: %v", ErrClosed, err)
		close(c.done)
	}
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
}

// readOne reads one envelope as the reader-role holder and routes it. It returns a timeout
// error (stream intact) when the read was interrupted.
func (c *Conn) readOne() error {
	env, err := c.sc.Recv()
	if err != nil {
		if wire.IsTimeout(err) {
			return err
		}
		c.fail(err)
		return err
	}
	switch env.GetBody().(type) {
	case *cuav1.Envelope_ToolResult, *cuav1.Envelope_ToolList:
	default:
		c.sc.Close()
		err := &wire.ViolationError{Reason: "unexpected_kind", Detail: "the worker sent a request-kind envelope"}
		c.fail(err)
		return err
	}
	c.mu.Lock()
	ch := c.pending[env.GetRequestId()]
	delete(c.pending, env.GetRequestId())
	c.mu.Unlock()
	if ch == nil {
		c.log.Debug("reply for no pending request", "request_id", env.GetRequestId())
		return nil
	}
	ch <- env
	return nil
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
		env.DeadlineUnixMs = max(d.UnixMilli(), 1)
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
		var se *wire.SendError
		if !errors.As(err, &se) && !errors.Is(err, ErrClosed) {
			return notStarted(CodeInvalidRequest, err.Error()), err
		}
		return notStarted(CodeWorkerUnavailable, "the worker is gone; the request was not sent"), err
	}
	env, err = c.await(ctx, id, ch)
	if err != nil {
		return unknown(err.Error()), err
	}
	if r := env.GetToolResult(); r != nil {
		return resultFromProto(r)
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
		out = append(out, ToolInfo{Name: t.GetName(), Description: t.GetDescription(), InputSchema: t.GetInputSchema(), OutputSchema: t.GetOutputSchema(), Annotations: t.GetAnnotations()})
	}
	return out, nil
}

// await waits for the reply to id, reading the channel itself whenever it can take the
// reader role. When ctx ends first it forwards a Cancel and gives the worker a short grace
// period to answer for itself.
func (c *Conn) await(ctx context.Context, id uint64, ch chan *cuav1.Envelope) (*cuav1.Envelope, error) {
	if env, done, err := c.wait(ctx, id, ch); done {
		return env, err
	}
	cancelEnv := &cuav1.Envelope{Body: &cuav1.Envelope_Cancel{Cancel: &cuav1.Cancel{RequestId: id}}}
	if _, _, _, err := c.send(context.WithoutCancel(ctx), cancelEnv, false); err != nil {
		c.log.Debug("forward cancel", "request_id", id, "err", err)
	}
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelGrace)
	defer cancel()
	if env, done, err := c.wait(gctx, id, ch); done {
		return env, err
	}
	c.forget(id)
	return nil, fmt.Errorf("no answer after cancelling: %w", ctx.Err())
}

// wait returns (reply, true, nil) when the reply arrived, (nil, true, err) when the channel
// ended, and (nil, false, nil) when ctx ended first.
func (c *Conn) wait(ctx context.Context, id uint64, ch chan *cuav1.Envelope) (*cuav1.Envelope, bool, error) {
	for {
		select {
		case env, ok := <-ch:
			if !ok {
				return nil, true, c.Err()
			}
			return env, true, nil
		case <-ctx.Done():
			return nil, false, nil
		case <-c.readTok:
		}
		// We hold the reader role. Our reply may have been routed meanwhile.
		select {
		case env, ok := <-ch:
			c.readTok <- struct{}{}
			if !ok {
				return nil, true, c.Err()
			}
			return env, true, nil
		default:
		}
		stop := c.armInterrupt(ctx, id)
		err := c.readOne()
		stop()
		c.readTok <- struct{}{}
		if err != nil && !wire.IsTimeout(err) {
			continue // ch is closed by fail; the next round returns
		}
	}
}

// armInterrupt makes ctx's end interrupt the reader role's blocked read (by an expired read
// deadline) until the returned stop function runs. stop also clears any deadline set.
func (c *Conn) armInterrupt(ctx context.Context, id uint64) func() {
	if ctx.Done() == nil {
		return func() {}
	}
	c.interruptMu.Lock()
	c.interruptID = id
	c.interruptMu.Unlock()
	stopAfter := context.AfterFunc(ctx, func() {
		c.interruptMu.Lock()
		defer c.interruptMu.Unlock()
		if c.interruptID == id {
			_ = c.sc.SetReadDeadline(time.Unix(1, 0))
		}
	})
	return func() {
		fired := !stopAfter()
		c.interruptMu.Lock()
		c.interruptID = 0
		if fired {
			_ = c.sc.SetReadDeadline(time.Time{})
		}
		c.interruptMu.Unlock()
	}
}

func ctxCode(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return CodeDeadlineExceeded
	}
	return CodeCanceled
}
