package mcpproxy

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/cua-host/cua-host/test/testworker"
)

func TestMain(m *testing.M) {
	testworker.MaybeRun() // the re-executed test binary becomes a worker here
	if os.Getenv("GORACE") == "" {
		// Race-built workers otherwise sleep a second at exit.
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	goleak.VerifyTestMain(m)
}
