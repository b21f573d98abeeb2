package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/policy"
)

// Options configures New.
type Options struct {
	// Logger receives the host's logs; nil discards them.
	Logger *slog.Logger
	// WorkerLogLevel is the level of the workers' and proxies' logs.
	WorkerLogLevel slog.Level
	// LogOut receives the proxies' logs (the workers' go through Logger); nil means
	// /dev/null. The caller keeps ownership.
	LogOut *os.File
	// RuntimeDir is where the endpoint directory (mode 0700) is created; empty means
	// $XDG_RUNTIME_DIR, else the system's temporary directory.
	RuntimeDir string
	// Ceiling bounds every session; the zero value means authz.DefaultCeiling().
	Ceiling authz.Ceiling
	// Policy is the policy snapshot every worker gets; nil means none.
	Policy *policy.Set
	// ConsentTimeout is how long a consent_request waits for the app's consent_decision
	// before it is a deny; zero means 60 s.
	ConsentTimeout time.Duration
	// CallTimeout is the proxies' deadline for each tool call; zero means their default.
	CallTimeout time.Duration
	// Width and Height size private displays; zero means the display package's default.
	Width, Height int
	// ProtectAncestors protects the host's ancestors (the app, its terminal) from every
	// session, as the command line does.
	ProtectAncestors bool
	// JanitorArgs, when set, are the arguments this program is re-executed with
	// (/proc/self/exe) to run RunJanitor: a process outside the host's process group that
	// removes the endpoint directory once the host is gone, even by SIGKILL. Nil starts
	// no janitor.
	JanitorArgs []string
	// KeepAfterEOF keeps the host running after end-of-file on the control stream until
	// its last session ends or ctx ends (a detached `cua-host session start`). Without it,
	// end-of-file revokes every session and stops everything.
	KeepAfterEOF bool
	// WorkerPath, WorkerArgs, ProxyPath and ProxyArgs override the binaries (tests).
	WorkerPath string
	WorkerArgs []string
	ProxyPath  string
	ProxyArgs  []string
}

// Server is a serve host: trust domains (a worker, and a display), their sessions and
// endpoints, driven by the JSON-RPC control stream. Build it with New and drive it with
// Run; it is used once.
type Server struct {
	opts Options
	log  *slog.Logger
	dir  *endpointDir
	out  *writer

	// baseCtx is the server's base context: cancelled when Run stops.
	baseCtx context.Context
	cancel  context.CancelFunc
	// wg counts request handlers and session and domain watchers.
	wg sync.WaitGroup

	consent *consentBroker

	// mu guards the fields below. Lock order: Server.mu before domain.mu.
	mu       sync.Mutex
	domains  map[string]*domain
	sessions map[string]*session
	stopping bool
	// ended is signalled when a session ends (KeepAfterEOF waits for the last).
	ended chan struct{}
}

// New checks opts and creates the endpoint directory. Close it with Run (which removes
// it when it returns) or Close when Run is never called.
func New(opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Ceiling.AllowedModes == nil {
		opts.Ceiling = authz.DefaultCeiling()
	}
	if err := opts.Ceiling.Validate(); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if opts.ConsentTimeout == 0 {
		opts.ConsentTimeout = 60 * time.Second
	}
	dir, err := newEndpointDir(opts.RuntimeDir, opts.JanitorArgs, opts.Logger)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	s := &Server{
		opts:     opts,
		log:      opts.Logger,
		dir:      dir,
		domains:  map[string]*domain{},
		sessions: map[string]*session{},
		ended:    make(chan struct{}, 1),
	}
	s.consent = newConsentBroker(opts.ConsentTimeout, s.notify)
	return s, nil
}

// Dir returns the endpoint directory.
func (s *Server) Dir() string { return s.dir.path }

// Close removes the endpoint directory of a Server whose Run was never called.
func (s *Server) Close() error { return s.dir.Close() }

// Run serves the control stream: one JSON-RPC 2.0 request per line on in, responses and
// notifications on out. It returns after end-of-file on in (with KeepAfterEOF: after the
// last session ended) or when ctx ends, having revoked every session, stopped every
// worker, proxy and private display, and removed every endpoint. A write error on out
// (the app is gone) stops it the same way. The error is nil after a normal end.
func (s *Server) Run(ctx context.Context, in io.Reader, out io.Writer) error {
	s.out = &writer{w: out}
	s.baseCtx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	defer s.cancel()
	defer s.dir.Close()
	defer s.shutdown()

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	stopRead := make(chan struct{})
	defer close(stopRead)
	go func() {
		lr := newLineReader(in)
		for {
			line, err := lr.next()
			if errors.Is(err, errLineTooLong) {
				_ = s.out.fail(nil, errorf(CodeInvalidRequest, "invalid request: line longer than %d bytes", MaxLine))
				continue
			}
			if err != nil {
				readErr <- err
				return
			}
			select {
			case lines <- line:
			case <-stopRead:
				return
			}
		}
	}()
	for {
		select {
		case line := <-lines:
			s.handleLine(line)
		case err := <-readErr:
			if !errors.Is(err, io.EOF) {
				s.log.Warn("control stream", "err", err)
			}
			s.log.Info("end of the control stream")
			if s.opts.KeepAfterEOF {
				s.consent.closeAll() // nobody is left to answer
				s.waitLastSession(ctx)
			}
			return nil
		case <-ctx.Done():
			s.log.Info("stopping", "cause", context.Cause(ctx))
			return nil
		}
	}
}

// waitLastSession returns once no session is left or ctx ends.
func (s *Server) waitLastSession(ctx context.Context) {
	for {
		s.mu.Lock()
		n := len(s.sessions)
		s.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-s.ended:
		case <-ctx.Done():
			return
		}
	}
}

// handleLine decodes one line and starts its handler.
func (s *Server) handleLine(line []byte) {
	req, id, rerr := DecodeLine(line)
	if rerr != nil {
		s.log.Debug("bad control line", "err", rerr)
		_ = s.out.fail(id, rerr)
		return
	}
	h, ok := methods[req.Method]
	if !ok {
		if !req.IsNotification() {
			_ = s.out.fail(req.ID, errorf(CodeMethodNotFound, "method not found: %q (methods: create_session, revoke_session, revoke_all, list_sessions, status, consent_decision)", req.Method))
		}
		return
	}
	s.mu.Lock()
	stopping := s.stopping
	if !stopping {
		s.wg.Add(1)
	}
	s.mu.Unlock()
	if stopping {
		_ = s.out.fail(req.ID, errorf(CodeRefused, "the host is shutting down"))
		return
	}
	go func() {
		defer s.wg.Done()
		result, err := h(s, s.baseCtx, req.Params)
		if req.IsNotification() {
			return
		}
		if err != nil {
			_ = s.out.fail(req.ID, err)
			return
		}
		_ = s.out.result(req.ID, result)
	}()
}

// notify sends a notification to the app.
func (s *Server) notify(method string, params any) {
	if err := s.out.notify(method, params); err != nil {
		s.log.Debug("notification not delivered", "method", method, "err", err)
	}
}

type handler func(s *Server, ctx context.Context, params json.RawMessage) (any, *Error)

var methods = map[string]handler{
	"create_session":   (*Server).createSession,
	"revoke_session":   (*Server).revokeSession,
	"revoke_all":       (*Server).revokeAll,
	"list_sessions":    (*Server).listSessions,
	"status":           (*Server).status,
	"consent_decision": (*Server).consentDecision,
}

func noParams(params json.RawMessage) *Error {
	return decodeParams(params, &struct{}{})
}

func (s *Server) revokeSession(ctx context.Context, params json.RawMessage) (any, *Error) {
	var p sessionRef
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Session == "" {
		return nil, errorf(CodeInvalidParams, "invalid params: \"session\" is required")
	}
	s.mu.Lock()
	sess := s.sessions[p.Session]
	s.mu.Unlock()
	if sess == nil {
		return nil, errorf(CodeRefused, "no session %q", p.Session)
	}
	sess.end(ctx, reasonRevoked)
	return map[string]any{"revoked": []string{p.Session}}, nil
}

func (s *Server) revokeAll(ctx context.Context, params json.RawMessage) (any, *Error) {
	if err := noParams(params); err != nil {
		return nil, err
	}
	s.mu.Lock()
	all := make([]*session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		all = append(all, sess)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	labels := []string{}
	for _, sess := range all {
		labels = append(labels, sess.label)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess.end(ctx, reasonRevoked)
		}()
	}
	wg.Wait()
	sort.Strings(labels)
	return map[string]any{"revoked": labels}, nil
}

func (s *Server) listSessions(_ context.Context, params json.RawMessage) (any, *Error) {
	if err := noParams(params); err != nil {
		return nil, err
	}
	return map[string]any{"sessions": s.sessionInfos()}, nil
}

func (s *Server) sessionInfos() []SessionInfo {
	s.mu.Lock()
	all := make([]*session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		all = append(all, sess)
	}
	s.mu.Unlock()
	out := make([]SessionInfo, 0, len(all))
	for _, sess := range all {
		out = append(out, sess.info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Label < out[j].Label })
	return out
}

// Status is the status method's result.
type Status struct {
	Workers  []WorkerInfo    `json:"workers"`
	Displays []DisplayInfo   `json:"displays"`
	Sessions []SessionStatus `json:"sessions"`
	// InFlightCalls counts the tool calls in flight in every worker that answered.
	InFlightCalls int `json:"in_flight_calls"`
	// PendingConsent counts consent requests waiting for the app's decision.
	PendingConsent int `json:"pending_consent"`
	// EndpointDir is the 0700 directory holding the endpoints.
	EndpointDir string `json:"endpoint_dir"`
}

// WorkerInfo describes one trust domain's worker.
type WorkerInfo struct {
	TrustDomain string   `json:"trust_domain"`
	PID         int      `json:"pid"`
	Generation  string   `json:"generation"`
	Display     string   `json:"display"`
	Sessions    []string `json:"sessions"`
	// InFlightCalls counts the calls in flight on the worker's sessions.
	InFlightCalls int `json:"in_flight_calls"`
	// StatusError says why the worker's own report is missing (it did not answer in
	// time, or it is gone); its sessions' counts are then 0.
	StatusError string `json:"status_error,omitempty"`
}

// SessionStatus is a session as status reports it: what list_sessions says, and what its
// worker reports running for it.
type SessionStatus struct {
	SessionInfo
	// InFlightCalls counts the session's tool calls accepted by its worker and not yet
	// answered; AwaitingConsent those of them waiting for a consent decision.
	InFlightCalls   int `json:"in_flight_calls"`
	AwaitingConsent int `json:"awaiting_consent"`
	// Calls describes each call in flight, oldest first.
	Calls []CallInfo `json:"calls"`
}

// CallInfo is one tool call in flight.
type CallInfo struct {
	// Tool is the tool's name; "" when the agent named no tool of the worker.
	Tool string `json:"tool"`
	// ReceivedAt is when the worker accepted the call; RunningMS how long ago that was.
	ReceivedAt time.Time `json:"received_at"`
	RunningMS  int64     `json:"running_ms"`
}

// DisplayInfo describes one display a worker drives.
type DisplayInfo struct {
	Name    string `json:"name"`
	Private bool   `json:"private"`
	// Nested is true for a private display shown as a window on the person's display.
	Nested      bool   `json:"nested,omitempty"`
	ServerPID   int    `json:"server_pid,omitempty"`
	PIDs        []int  `json:"pids,omitempty"`
	TrustDomain string `json:"trust_domain"`
}

// statusTimeout bounds how long status waits for each worker's report.
const statusTimeout = 2 * time.Second

func (s *Server) status(ctx context.Context, params json.RawMessage) (any, *Error) {
	if err := noParams(params); err != nil {
		return nil, err
	}
	s.mu.Lock()
	domains := make([]*domain, 0, len(s.domains))
	for _, d := range s.domains {
		domains = append(domains, d)
	}
	s.mu.Unlock()
	sort.Slice(domains, func(i, j int) bool { return domains[i].name < domains[j].name })

	// Every worker is asked at once; a slow one costs at most statusTimeout.
	reports := make([]workerReport, len(domains))
	var wg sync.WaitGroup
	for i, d := range domains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reports[i] = d.report(ctx, statusTimeout)
		}()
	}
	wg.Wait()

	st := Status{Workers: []WorkerInfo{}, Displays: []DisplayInfo{}, Sessions: []SessionStatus{}, EndpointDir: s.dir.path}
	running := map[string]host.SessionStatus{} // by label, over every worker
	for _, r := range reports {
		if !r.ok {
			continue
		}
		w := r.worker
		if r.err != nil {
			w.StatusError = r.err.Error()
		} else {
			w.InFlightCalls = r.status.InFlightCalls
			st.InFlightCalls += r.status.InFlightCalls
			for _, ss := range r.status.Sessions {
				running[ss.Label] = ss
			}
		}
		st.Workers = append(st.Workers, w)
		st.Displays = append(st.Displays, r.display)
	}
	now := time.Now()
	for _, info := range s.sessionInfos() {
		ss := SessionStatus{SessionInfo: info, Calls: []CallInfo{}}
		if r, ok := running[info.Label]; ok {
			ss.InFlightCalls, ss.AwaitingConsent = r.InFlightCalls, r.AwaitingConsent
			for _, c := range r.Calls {
				ss.Calls = append(ss.Calls, CallInfo{Tool: c.Tool, ReceivedAt: c.Received, RunningMS: max(0, now.Sub(c.Received).Milliseconds())})
			}
		}
		st.Sessions = append(st.Sessions, ss)
	}
	st.PendingConsent = s.consent.pending()
	return st, nil
}

func (s *Server) consentDecision(_ context.Context, params json.RawMessage) (any, *Error) {
	var p decisionParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.ID == nil {
		return nil, errorf(CodeInvalidParams, "invalid params: \"id\" (the consent_request's id) is required")
	}
	if p.Granted == nil {
		return nil, errorf(CodeInvalidParams, "invalid params: \"granted\" (true or false) is required")
	}
	var ttl time.Duration
	if len(p.TTL) > 0 && string(p.TTL) != "null" && string(p.TTL) != "0" {
		var e *Error
		if ttl, e = parseDuration("ttl", p.TTL); e != nil {
			return nil, e
		}
	}
	if !s.consent.decide(*p.ID, *p.Granted, ttl) {
		return nil, errorf(CodeRefused, "no pending consent request %d (answered already, or past its deadline: that was a deny)", *p.ID)
	}
	return map[string]any{"accepted": true}, nil
}

// shutdown ends every session and domain and waits for every handler and watcher.
func (s *Server) shutdown() {
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	s.consent.closeAll()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.baseCtx), shutdownBudget)
	defer cancel()
	s.cancel() // sessions still starting give up
	s.stopDomains(ctx)
	s.wg.Wait()
	s.stopDomains(ctx) // any a handler started before it gave up
}

// stopDomains stops every domain at once and waits for them.
func (s *Server) stopDomains(ctx context.Context) {
	s.mu.Lock()
	domains := make([]*domain, 0, len(s.domains))
	for _, d := range s.domains {
		domains = append(domains, d)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, d := range domains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.stop(ctx, reasonShutdown)
		}()
	}
	wg.Wait()
}

// shutdownBudget bounds the graceful part of stopping everything.
const shutdownBudget = 3 * time.Second
