package contract

import (
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestWorkerFlagsRoundTrip(t *testing.T) {
	for _, f := range []WorkerFlags{
		{},
		{LogLevel: slog.LevelDebug},
		{LogLevel: slog.LevelError, HelloTimeout: 300 * time.Millisecond},
		{LogLevel: slog.LevelWarn, HelloTimeout: 2 * time.Minute},
	} {
		got, err := ParseWorkerFlags(f.Args())
		if err != nil || !reflect.DeepEqual(got, f) {
			t.Errorf("%+v → %q → %+v, %v", f, f.Args(), got, err)
		}
	}
	if got, err := ParseWorkerFlags(nil); err != nil || got.LogLevel != slog.LevelInfo || got.HelloTimeout != 0 {
		t.Errorf("no flags: %+v, %v; want info and no timeout", got, err)
	}
}

func TestParseWorkerFlagsRefuses(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--log-level", "loud"}, "log-level"},
		{[]string{"--hello-timeout", "soon"}, "hello-timeout"},
		{[]string{"--hello-timeout", "-1s"}, "negative"},
		{[]string{"--endpoint"}, "flag provided but not defined"},
		{[]string{"--log-level", "info", "extra"}, `unexpected argument "extra"`},
	} {
		_, err := ParseWorkerFlags(tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), WorkerSubcommand+": ") {
			t.Errorf("%q: err %v, want %q after %q", tt.args, err, tt.want, WorkerSubcommand)
		}
	}
}

func TestProxyFlagsRoundTrip(t *testing.T) {
	for _, f := range []ProxyFlags{
		{},
		{LogLevel: slog.LevelDebug, CallTimeout: 90 * time.Second},
		{HTTP: "127.0.0.1:8123", LogLevel: slog.LevelWarn},
		{Endpoint: true, IdleExit: 30 * time.Minute, CallTimeout: time.Minute},
		{Endpoint: true, EndpointHTTP: true, LogLevel: slog.LevelError},
	} {
		got, err := ParseProxyFlags(f.Args())
		if err != nil || !reflect.DeepEqual(got, f) {
			t.Errorf("%+v → %q → %+v, %v", f, f.Args(), got, err)
		}
	}
}

func TestParseProxyFlagsRefuses(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--endpoint-http"}, "--endpoint-http needs --endpoint"},
		{[]string{"--endpoint", "--http", "127.0.0.1:1"}, "--endpoint excludes --http"},
		{[]string{"--idle-exit", "-5s"}, "cannot be negative"},
		{[]string{"--call-timeout", "x"}, "call-timeout"},
		{[]string{"--log-level", "chatty"}, "log-level"},
		{[]string{"--hello-timeout", "1s"}, "flag provided but not defined"},
		{[]string{"serve"}, `unexpected argument "serve"`},
	} {
		_, err := ParseProxyFlags(tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), ProxySubcommand+": ") {
			t.Errorf("%q: err %v, want %q after %q", tt.args, err, tt.want, ProxySubcommand)
		}
	}
}

// TestProxyDescriptors: the descriptors a proxy expects are numbered in order without
// gaps from 3 (exec.Cmd.ExtraFiles places them so) and follow its flags.
func TestProxyDescriptors(t *testing.T) {
	for _, tt := range []struct {
		f    ProxyFlags
		want []Descriptor
	}{
		{ProxyFlags{}, []Descriptor{ProxySession, ProxyBootstrap}},
		{ProxyFlags{HTTP: "127.0.0.1:0"}, []Descriptor{ProxySession, ProxyBootstrap}},
		{ProxyFlags{Endpoint: true}, []Descriptor{ProxySession, ProxyBootstrap, ProxyEndpoint}},
		{ProxyFlags{Endpoint: true, EndpointHTTP: true}, []Descriptor{ProxySession, ProxyBootstrap, ProxyEndpoint, ProxyHTTPListener}},
	} {
		got := tt.f.Descriptors()
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%+v: %v, want %v", tt.f, got, tt.want)
		}
		for i, d := range got {
			if d.FD != 3+i {
				t.Errorf("%+v: %s at %d, want %d", tt.f, d.Name, d.FD, 3+i)
			}
		}
	}
}

// TestDescriptorCheck: Check tells a descriptor of the right type from one of another
// type and from a closed number.
func TestDescriptorCheck(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	pipe := Descriptor{FD: int(r.Fd()), Name: "pipe", Type: ProxyBootstrap.Type}
	if err := pipe.Check(); err != nil {
		t.Errorf("a pipe as a pipe: %v", err)
	}
	asSocket := Descriptor{FD: int(r.Fd()), Name: "pipe", Type: ProxySession.Type}
	if err := asSocket.Check(); err == nil || !strings.Contains(err.Error(), "file type") {
		t.Errorf("a pipe as a socket: %v", err)
	}
	closed := Descriptor{FD: 1 << 20, Name: "none", Type: ProxySession.Type}
	if err := closed.Check(); err == nil || !strings.Contains(err.Error(), "descriptor 1048576 (none)") {
		t.Errorf("a closed number: %v", err)
	}
}

func TestReachRoundTrip(t *testing.T) {
	for _, k := range ClientKinds {
		if got, err := ParseClientKind(string(k)); err != nil || got != k {
			t.Errorf("client kind %q → %q, %v", k, got, err)
		}
	}
	for _, tr := range Transports {
		if got, err := ParseTransport(string(tr)); err != nil || got != tr {
			t.Errorf("transport %q → %q, %v", tr, got, err)
		}
	}
	if k, err := ParseClientKind(""); err != nil || k != ClientDirect {
		t.Errorf("empty client kind → %q, %v", k, err)
	}
	if tr, err := ParseTransport(""); err != nil || tr != TransportDaemon {
		t.Errorf("empty transport → %q, %v", tr, err)
	}
	if _, err := ParseClientKind("MCP"); err == nil || err.Error() != `client_kind "MCP": want cli, direct, mcp, python_sdk or typescript_sdk` {
		t.Errorf("bad client kind: %v", err)
	}
	if _, err := ParseTransport("stdio"); err == nil || err.Error() != `transport "stdio": want cli, daemon, mcp_stdio or mcp_http` {
		t.Errorf("bad transport: %v", err)
	}
}
