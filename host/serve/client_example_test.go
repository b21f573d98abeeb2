package serve_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cua-host/cua-host/host/serve"
)

// A Go program drives a serve host through a Client over the host's two streams: here a
// Server running in this process over pipes (a `cua-host serve` child's stdin and stdout
// work the same way). It reads the host's status, asks for a session the host refuses,
// and closes the stream, on which the host stops.
func ExampleClient() {
	runtimeDir, err := os.MkdirTemp("", "serve-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(runtimeDir)
	srv, err := serve.New(serve.Options{RuntimeDir: runtimeDir})
	if err != nil {
		fmt.Println(err)
		return
	}
	hostIn, toHost := io.Pipe()
	fromHost, hostOut := io.Pipe()
	stopped := make(chan error, 1)
	go func() {
		err := srv.Run(context.Background(), hostIn, hostOut)
		hostOut.Close()
		stopped <- err
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := serve.NewClient(fromHost, toHost, serve.ClientOptions{
		OnNotification: func(method string, _ json.RawMessage) { fmt.Println("notification:", method) },
	})
	st, err := c.Status(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("workers %d, sessions %d, endpoints under the runtime directory: %v\n",
		len(st.Workers), len(st.Sessions), len(st.EndpointDir) > len(runtimeDir) && st.EndpointDir[:len(runtimeDir)] == runtimeDir)

	_, err = c.CreateSession(ctx, serve.CreateSessionParams{Label: "agent", Mode: "unrestricted", Display: "private"})
	var rpcErr *serve.Error
	if errors.As(err, &rpcErr) {
		fmt.Println("create_session refused with code", rpcErr.Code)
	}
	sessions, err := c.ListSessions(ctx)
	fmt.Println("sessions:", len(sessions), err)

	c.Close() // end-of-file: the host revokes everything and stops
	fmt.Println("host stopped:", <-stopped)
	<-c.Done()
	_, err = c.Status(ctx)
	fmt.Println("after the end:", errors.Is(err, serve.ErrClientClosed))
	// Output:
	// workers 0, sessions 0, endpoints under the runtime directory: true
	// create_session refused with code -32602
	// sessions: 0 <nil>
	// host stopped: <nil>
	// after the end: true
}
