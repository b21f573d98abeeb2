package mcpproxy

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EnvHTTPToken names the environment variable that holds the loopback HTTP bearer token.
const EnvHTTPToken = "CUA_HOST_HTTP_TOKEN"

// Token length bounds, in characters.
const (
	MinTokenLen = 32
	MaxTokenLen = 4096
)

// Limits of the HTTP transport.
const (
	maxHeaderBytes    = 64 << 10
	maxRequestBody    = MaxArgumentBytes + 1<<20
	readHeaderTimeout = 10 * time.Second
	// idleTimeout closes a keep-alive connection that sends no next request.
	idleTimeout = 30 * time.Second
	// maxConns bounds the connections served at once; more are closed on accept.
	maxConns      = 64
	sessionIdle   = 30 * time.Minute
	shutdownGrace = 2 * time.Second
)

// CheckToken validates a bearer token: 32–4096 characters of valid UTF-8, none of them
// whitespace or control characters. The error never contains the token.
func CheckToken(tok string) error {
	if tok == "" {
		return fmt.Errorf("%s is not set; --http needs a bearer token of %d–%d non-whitespace characters", EnvHTTPToken, MinTokenLen, MaxTokenLen)
	}
	if !utf8.ValidString(tok) {
		return fmt.Errorf("%s is not valid UTF-8", EnvHTTPToken)
	}
	n := utf8.RuneCountInString(tok)
	if n < MinTokenLen || n > MaxTokenLen {
		return fmt.Errorf("%s must contain %d–%d non-whitespace, non-control characters (it has %d characters)", EnvHTTPToken, MinTokenLen, MaxTokenLen, n)
	}
	if strings.IndexFunc(tok, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return fmt.Errorf("%s must contain %d–%d non-whitespace, non-control characters (it contains whitespace or a control character)", EnvHTTPToken, MinTokenLen, MaxTokenLen)
	}
	return nil
}

// ParseListenAddr checks an --http address: HOST:PORT where HOST is a loopback IP
// literal (127.0.0.0/8, ::1) or "localhost" (which binds 127.0.0.1), and PORT is 0–65535
// (0 picks a free port). Anything that could listen beyond this machine — 0.0.0.0, ::, a
// public or private address, another host name, an empty host — is refused. It returns
// the address to bind.
func ParseListenAddr(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("--http %q: want 127.0.0.1:PORT: %v", s, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return "", fmt.Errorf("--http %q: port %q is not a number in 0–65535", s, port)
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.Zone() != "" {
		return "", fmt.Errorf("--http %q: host must be a loopback address (127.0.0.1, ::1) or localhost", s)
	}
	if !ip.Unmap().IsLoopback() {
		return "", fmt.Errorf("--http %q: %s is not a loopback address; cua-host listens on loopback only", s, ip)
	}
	return net.JoinHostPort(ip.Unmap().String(), strconv.FormatUint(p, 10)), nil
}

// httpGuard checks every request before the MCP handler sees it: a Host header naming
// this loopback listener and no foreign Origin (else 403), then the bearer token (else
// 401). The token is compared in constant time through its SHA-256 digest, so neither its
// bytes nor its length leak through timing.
type httpGuard struct {
	tokenSum [sha256.Size]byte
	hosts    map[string]bool // acceptable Host header values
	origins  map[string]bool // acceptable Origin header values
	next     http.Handler
	log      *slog.Logger
}

func newHTTPGuard(token string, port int, next http.Handler, log *slog.Logger) *httpGuard {
	g := &httpGuard{tokenSum: sha256.Sum256([]byte(token)), hosts: map[string]bool{}, origins: map[string]bool{}, next: next, log: log}
	p := strconv.Itoa(port)
	for _, h := range []string{"127.0.0.1", "localhost", "[::1]"} {
		g.hosts[h+":"+p] = true
		g.origins["http://"+h+":"+p] = true
	}
	return g
}

func (g *httpGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hosts[strings.ToLower(r.Host)] {
		g.log.Warn("HTTP request refused: foreign Host header", "host", r.Host, "remote", r.RemoteAddr)
		w.Header().Set("Connection", "close")
		http.Error(w, "forbidden: Host must name this loopback listener", http.StatusForbidden)
		return
	}
	if origins := r.Header.Values("Origin"); len(origins) > 0 && (len(origins) > 1 || !g.origins[strings.ToLower(origins[0])]) {
		g.log.Warn("HTTP request refused: foreign Origin", "origin", origins, "remote", r.RemoteAddr)
		w.Header().Set("Connection", "close")
		http.Error(w, "forbidden: foreign Origin", http.StatusForbidden)
		return
	}
	if !g.authorized(r.Header.Values("Authorization")) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="cua-host"`)
		w.Header().Set("Connection", "close") // a refused client keeps no connection
		http.Error(w, "unauthorized: a valid bearer token is required", http.StatusUnauthorized)
		return
	}
	g.next.ServeHTTP(w, r)
}

func (g *httpGuard) authorized(values []string) bool {
	if len(values) != 1 {
		return false
	}
	scheme, tok, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	sum := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(sum[:], g.tokenSum[:]) == 1
}

// ServeHTTP serves the proxy as a streamable HTTP MCP endpoint on ln (at any path) until
// ctx ends, behind the Host/Origin and bearer-token checks, and then closes every MCP
// session of the proxy's server. It takes ownership of ln.
// Preconditions: token passed CheckToken and ln listens on a loopback address.
func (p *Proxy) ServeHTTP(ctx context.Context, ln net.Listener, token string) error {
	if err := CheckToken(token); err != nil {
		ln.Close()
		return err
	}
	tcp, ok := ln.Addr().(*net.TCPAddr)
	if !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return fmt.Errorf("serve HTTP: %v is not a loopback TCP address", ln.Addr())
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.server }, &mcp.StreamableHTTPOptions{
		Logger:              p.sdkLog,
		SessionTimeout:      sessionIdle,
		MaxRequestBodyBytes: maxRequestBody,
	})
	srv := &http.Server{
		Handler:           newHTTPGuard(token, tcp.Port, mcpHandler, p.log),
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(newLimitListener(ln, maxConns, p.log)) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve HTTP: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	// MCP sessions outlive their HTTP requests; end them with the listener.
	for ss := range p.server.Sessions() {
		ss.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve HTTP: %w", err)
	}
	return nil
}
