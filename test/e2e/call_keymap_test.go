package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/display"
)

// TestCallTypesRemappedText: `cua-host call type_text` is a host that lives for one call.
// Characters the keymap lacks are typed through remapped keycodes, and the terminal reads
// them after the call has returned; the host must not put the keymap back before it has,
// or the terminal reads those keys as whatever the keycodes meant before. Witness: the file
// the terminal's `cat` wrote.
func TestCallTypesRemappedText(t *testing.T) {
	needDesktop(t)
	need(t, "xdotool")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, err := display.Start(ctx, display.Options{WindowManager: true, Width: 1024, Height: 768})
	if err != nil {
		t.Fatalf("start display: %v", err)
	}
	defer d.Close()
	xenv := append(os.Environ(), d.Env()...)
	out := filepath.Join(t.TempDir(), "typed.txt")
	pid, win := catTerminal(t, xenv, "call-target", "80x10+10+10", out)
	text := "Grüße, 世界 → ✓ Ωπλ жЯ €"
	args, _ := json.Marshal(map[string]any{"pid": pid, "window_id": json.Number(win), "text": text + "\n"})
	call := exec.Command(cuaHost, "call", "--display", d.Name(), "--mode", "unrestricted", "--dangerously-bypass-approvals",
		"type_text", string(args))
	call.Env = xenv
	res, err := call.CombinedOutput()
	if err != nil {
		t.Fatalf("cua-host call type_text: %v\n%s", err, res)
	}
	if !waitFor(5*time.Second, func() bool {
		b, _ := os.ReadFile(out)
		return strings.Contains(string(b), "\n")
	}) {
		b, _ := os.ReadFile(out)
		t.Fatalf("the terminal wrote %q; call said %s", b, res)
	}
	b, _ := os.ReadFile(out)
	if got := strings.TrimSuffix(string(b), "\n"); got != text {
		t.Errorf("the terminal received %q, want %q (call said %s)", got, text, fmt.Sprint(strings.TrimSpace(string(res))))
	}
}
