package host

import (
	"context"
	"fmt"
	"os"
	"time"
)

// maybeRunRole runs a helper role of the re-executed test binary, chosen by CUA_TEST_ROLE,
// and exits; it returns when the process was not started in a role.
//
//	jsonl: serve the JSON-lines baseline worker on stdin/stdout (benchmarks).
//	host: start a worker (this binary again), create a session, print
//	      "worker <pid>" and wait to be killed.
func maybeRunRole() {
	switch os.Getenv("CUA_TEST_ROLE") {
	case "":
		return
	case "host":
		h, err := Start(context.Background(), Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "role host:", err)
			os.Exit(1)
		}
		if _, err := h.CreateSession(context.Background(), SessionSpec{Label: "victim"}); err != nil {
			fmt.Fprintln(os.Stderr, "role host:", err)
			os.Exit(1)
		}
		fmt.Printf("worker %d\n", h.PID())
		time.Sleep(time.Hour)
		os.Exit(0)
	case "jsonl":
		runJSONLWorker(os.Stdin, os.Stdout)
		os.Exit(0)
	default:
		fmt.Fprintln(os.Stderr, "unknown CUA_TEST_ROLE")
		os.Exit(2)
	}
}
