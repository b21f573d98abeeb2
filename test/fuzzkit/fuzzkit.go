// Package fuzzkit is what the protocol fuzz harnesses (test/controlfuzz for the control
// channel, test/sessionfuzz for session channels) share: the program's entry point, their
// TestMain, the hex byte slices of reproducers, the strict decoders' check for unknown
// fields, where reproducers go, and the report of the reactions seen. The generators,
// models and executors stay with each harness: they follow different protocols.
package fuzzkit

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/test/testworker"
)

// Main is a harness program's main: the process becomes a worker when the harness
// re-executed it as one, seals the descriptors it inherited, and otherwise exits with
// run's status, its context cancelled by SIGINT or SIGTERM. name prefixes errors.
func Main(name string, run func(ctx context.Context, args []string, stdout io.Writer) int) {
	testworker.MaybeRun() // the re-executed harness becomes a worker here
	if err := host.SealInheritedFDs(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout)
	stop()
	os.Exit(code)
}

// RunTests is a harness's TestMain body: the re-executed test binary becomes a worker,
// and otherwise the tests run. Use it as os.Exit(fuzzkit.RunTests(m)).
func RunTests(m *testing.M) int {
	testworker.MaybeRun() // the re-executed test binary becomes a worker here
	if os.Getenv("GORACE") == "" {
		// Race-built workers otherwise sleep a second at exit (host/env_race.go).
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	return m.Run()
}

// Hex is a byte slice that JSON-encodes as hex, so reproducers are readable.
type Hex []byte

// MarshalJSON implements json.Marshaler.
func (h Hex) MarshalJSON() ([]byte, error) { return json.Marshal(hex.EncodeToString(h)) }

// UnmarshalJSON implements json.Unmarshaler.
func (h *Hex) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	d, err := hex.DecodeString(s)
	*h = d
	return err
}

// HasUnknown reports whether m or any message inside it carries unknown fields, which the
// worker's strict decoders refuse.
func HasUnknown(m protoreflect.Message) bool {
	if len(m.GetUnknown()) > 0 {
		return true
	}
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind {
			return true
		}
		if fd.IsList() {
			for i := 0; i < v.List().Len() && !found; i++ {
				found = HasUnknown(v.List().Get(i).Message())
			}
		} else {
			found = HasUnknown(v.Message())
		}
		return !found
	})
	return found
}

// OutDir returns dir, or when it is empty a new temporary directory named after the
// harness, for reproducers.
func OutDir(name, dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return os.MkdirTemp("", name+"-")
}

// PrintCounts writes one line per key of counts, in key order: the count, then the key.
func PrintCounts(w io.Writer, counts map[string]int) {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %8d  %s\n", counts[k], k)
	}
}

// Marshal encodes m for a table test, failing t when it cannot.
func Marshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
