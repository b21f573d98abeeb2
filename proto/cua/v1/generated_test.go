package cuav1_test

import (
	"os"
	"os/exec"
	"testing"
)

// TestGeneratedCodeIsFresh regenerates the Go code from the .proto files with the pinned
// buf and protoc-gen-go and fails when it differs from what is committed.
func TestGeneratedCodeIsFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("runs buf through go run; skipped with -short")
	}
	cmd := exec.Command("bash", "../../../scripts/gen-proto.sh", "--check")
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("generated code is stale or could not be regenerated (run scripts/gen-proto.sh): %v", err)
	}
}
