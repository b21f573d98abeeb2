package mcpproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cua-host/cua-host/client"
)

// Caller is the session channel as the proxy uses it; *client.Conn implements it.
type Caller interface {
	// ListTools returns the tools the session may call.
	ListTools(ctx context.Context) ([]client.ToolInfo, error)
	// Call runs one tool; the result's Outcome is always set, and err is non-nil only
	// when the channel failed.
	Call(ctx context.Context, name string, args json.RawMessage) (client.Result, error)
}

// Options configures New.
type Options struct {
	// Logger receives the proxy's logs, and the SDK's when it is enabled at debug level
	// (the SDK logs routine events as errors, such as a cancelled Run); nil discards them.
	Logger *slog.Logger
	// Version is the server version announced in initialize.
	Version string
	// CallTimeout bounds every forwarded call (the deadline the worker sees); zero means
	// DefaultCallTimeout.
	CallTimeout time.Duration
}

// DefaultCallTimeout is the deadline of a forwarded call when Options.CallTimeout is zero.
const DefaultCallTimeout = 120 * time.Second

// MaxArgumentBytes bounds the arguments of one tools/call; larger ones are invalid params.
// It stays well below the session channel's frame limit.
const MaxArgumentBytes = 16 << 20

// instructions are shown to the agent in initialize.
const instructions = `cua-host drives a Linux X11 desktop (often a private, throwaway one).
Observe with get_desktop_state (screenshot + windows), list_windows and list_apps; act with launch_app, click, type_text, press_key, hotkey, scroll and friends.
Every result carries _meta["cua-host/outcome"]: "completed" (the tool ran; check isError), "not_started" (provably nothing happened) or "unknown" (it may have happened: observe before retrying). Action results' structuredContent is {effect, route, delivery, evidence, escalation}: effect "confirmed" means cua-host read the change back.
A refused call has isError=true and structuredContent {"status":"refused","refusal":{code, message}}; the codes are stable (permission_denied, bounded_resource_outside_manifest, authorization_declined, invalid_arguments, …). get_session and get_config describe what this session may do.
The resource ` + GuideURI + ` (resources/read) is the guide for agents: observe, act, verify; element tokens; delivery; outcomes; what every refusal code means and what to do next.`

// Proxy is an MCP server whose tools are the worker's. Build it with New; it is safe
// for concurrent use and may serve several MCP sessions (HTTP clients) at once, all on
// the one session channel.
type Proxy struct {
	caller  Caller
	log     *slog.Logger
	timeout time.Duration
	server  *mcp.Server
	sdkLog  *slog.Logger // the SDK's logger: p.log at debug level, else discarded
}

// New returns a proxy forwarding to caller. It does not take ownership of caller.
func New(caller Caller, opts Options) *Proxy {
	if caller == nil {
		panic("mcpproxy: New with nil caller")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	p := &Proxy{caller: caller, log: opts.Logger, timeout: opts.CallTimeout}
	sdkLog := slog.New(slog.DiscardHandler)
	if opts.Logger.Enabled(context.Background(), slog.LevelDebug) {
		sdkLog = opts.Logger.With("sdk", "go-sdk")
	}
	p.sdkLog = sdkLog
	p.server = mcp.NewServer(&mcp.Implementation{Name: "cua-host", Title: "cua-host (Linux X11 computer use)", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       sdkLog,
		// The tools are the worker's and do not change during a session; the one resource,
		// the agent guide, is built in.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}},
	})
	p.server.AddResource(guideResource, readGuide)
	p.server.AddReceivingMiddleware(p.intercept)
	return p
}

// Server returns the MCP server, for a transport of the caller's choice.
func (p *Proxy) Server() *mcp.Server { return p.server }

// intercept answers tools/list and tools/call from the worker; every other method goes
// to the SDK (initialize, ping, resources/list and resources/read of the agent guide, and
// JSON-RPC errors for methods that do not exist).
func (p *Proxy) intercept(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			if r, ok := req.(*mcp.ListToolsRequest); ok {
				return p.listTools(ctx, r)
			}
		case "tools/call":
			if r, ok := req.(*mcp.CallToolRequest); ok {
				return p.callTool(ctx, r)
			}
		}
		return next(ctx, method, req)
	}
}

// listTools answers tools/list with the worker's list (already filtered by policy and
// manifest), in one page.
func (p *Proxy) listTools(ctx context.Context, req *mcp.ListToolsRequest) (*mcp.ListToolsResult, error) {
	if req.Params != nil && req.Params.Cursor != "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: unknown cursor (tools/list has one page)"}
	}
	lctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	infos, err := p.caller.ListTools(lctx)
	if err != nil {
		p.log.Warn("list tools", "err", err)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the worker did not answer tools/list: " + err.Error()}
	}
	// The list belongs to this session: only its own client may cache it.
	return &mcp.ListToolsResult{Tools: p.toolsFromInfos(infos), Cacheable: mcp.Cacheable{CacheScope: "private"}}, nil
}

// toolsFromInfos converts the worker's tool list, repairing (with a log line) what would
// make the whole list unencodable. The worker lists no alias (its inventory cannot name
// one), so the proxy keeps no list of them: a call of an alias is forwarded like any
// other and the worker canonicalises it. A tool's outputSchema is
// its worker's output schema with the refusal and error shapes beside it (OutputSchema),
// and no schema uses "const".
func (p *Proxy) toolsFromInfos(infos []client.ToolInfo) []*mcp.Tool {
	out := make([]*mcp.Tool, 0, len(infos))
	for _, ti := range infos {
		if ti.Name == "" {
			continue
		}
		t := &mcp.Tool{Name: ti.Name, Description: ti.Description, InputSchema: json.RawMessage(`{"type":"object"}`)}
		if isJSONObject(ti.InputSchema) {
			t.InputSchema = withoutConst(ti.InputSchema)
		} else if len(ti.InputSchema) > 0 {
			p.log.Warn("worker sent an input schema that is not a JSON object; listing {\"type\":\"object\"}", "tool", ti.Name)
		}
		if s := OutputSchema(ti.OutputSchema); s != nil {
			t.OutputSchema = s
		} else if len(ti.OutputSchema) > 0 {
			p.log.Warn("worker sent an output schema that is not a JSON object; declaring none", "tool", ti.Name)
		}
		if len(ti.Annotations) > 0 {
			var a mcp.ToolAnnotations
			if err := json.Unmarshal(ti.Annotations, &a); err != nil {
				p.log.Warn("worker sent unreadable annotations", "tool", ti.Name, "err", err)
			} else {
				t.Annotations = &a
			}
		}
		out = append(out, t)
	}
	return out
}

// callTool forwards one tools/call with a deadline. Cancellation of ctx (the client's
// notifications/cancelled, a closed HTTP request) reaches the worker as a Cancel.
func (p *Proxy) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if req.Params == nil || req.Params.Name == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: tools/call needs a tool name"}
	}
	name := req.Params.Name
	args, err := ForwardArgs(req.Params.Arguments)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Invalid params: %v", err)}
	}
	cctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	start := time.Now()
	res, err := p.caller.Call(cctx, name, args)
	if err != nil {
		p.log.Warn("call failed on the session channel", "tool", name, "outcome", res.Outcome.String(), "err", err)
	} else {
		p.log.Debug("call", "tool", name, "outcome", res.Outcome.String(), "is_error", res.IsError, "elapsed", time.Since(start))
	}
	return ToolResult(res), nil
}
