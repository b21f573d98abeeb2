// Command cua-worker is the cua-host worker as a binary of its own, for programs that embed
// a host (package host) but whose own binary cannot be re-executed as a worker. Point
// host.Options.WorkerPath at it, ideally with host.Options.WorkerSHA256 so the host
// executes exactly the bytes it hashed.
//
// It is started only by a host, which hands it the control channel at fd 3; run by hand it
// exits with status 64.
package main

import (
	"os"

	"github.com/cua-host/cua-host/worker"
)

func main() {
	os.Exit(worker.Main(os.Args[1:], worker.Config{NewRegistry: worker.DesktopRegistry}))
}
