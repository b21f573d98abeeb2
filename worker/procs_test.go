package worker

import (
	"runtime"
	"testing"
)

func TestUseOneThread(t *testing.T) {
	was := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(was)
	useOneThread(func(string) string { return "4" })
	if got := runtime.GOMAXPROCS(0); got != 4 {
		t.Errorf("with GOMAXPROCS set: %d threads, want the environment's 4", got)
	}
	useOneThread(func(string) string { return "" })
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("without GOMAXPROCS: %d threads, want 1", got)
	}
}
