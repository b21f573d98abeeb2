package mcpproxy

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"
)

// serveHTTPForTest starts ServeHTTP on a loopback port and returns its address; the server
// stops with the test.
func serveHTTPForTest(t *testing.T) string {
	t.Helper()
	s := startStack(t, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.p.ServeHTTP(ctx, ln, testToken) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	})
	return ln.Addr().String()
}

// TestRefusedHTTPConnectionCloses: a client refused with 401 (no token) or 403 (foreign
// Host) does not keep its connection: the server closes it after the response instead of
// waiting for another request forever.
func TestRefusedHTTPConnectionCloses(t *testing.T) {
	addr := serveHTTPForTest(t)
	for _, tc := range []struct {
		name, host string
		want       int
	}{
		{name: "no token", host: addr, want: http.StatusUnauthorized},
		{name: "foreign host", host: "evil.example", want: http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			req := "POST /mcp HTTP/1.1\r\nHost: " + tc.host + "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
			if _, err := io.WriteString(c, req); err != nil {
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("read response: %v", err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tc.want)
			}
			// The server must close the connection: the next read sees EOF well before the
			// deadline, not a timeout.
			if _, err := br.ReadByte(); err != io.EOF {
				t.Errorf("after a refused request the connection stayed open: read = %v, want EOF", err)
			}
		})
	}
}

// TestLimitListener: connections beyond the cap are closed on accept, and a closed one
// frees its slot.
func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := newLimitListener(inner, 2, slog.New(slog.DiscardHandler))
	defer ln.Close()
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	var clients []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	first, second := <-accepted, <-accepted
	// The third was closed by the listener: its client reads EOF.
	_ = clients[2].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := clients[2].Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("third connection over the cap: read = %v, want EOF", err)
	}
	// Closing one frees a slot for the next.
	first.Close()
	c, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	clients = append(clients, c)
	select {
	case got := <-accepted:
		got.Close()
	case <-time.After(5 * time.Second):
		t.Errorf("no connection accepted after a slot was freed")
	}
	second.Close()
}
