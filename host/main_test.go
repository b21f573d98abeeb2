package host

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/cua-host/cua-host/internal/testworker"
)

func TestMain(m *testing.M) {
	testworker.MaybeRun() // the re-executed test binary becomes a worker here
	maybeRunRole()
	goleak.VerifyTestMain(m)
}
