package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkSharedDisplay measures background input through the whole stack (go-sdk client
// → stdio → proxy → worker → X server) on a display shared with a person — Xvfb with a
// cookie and openbox, their terminal focused and their pointer parked — into a terminal
// the person started, beside the same input sent by xdotool, one process per action as
// scripts drive a desktop. scripts/bench.sh prints the figures side by side.
func BenchmarkSharedDisplay(b *testing.B) {
	needDesktop(b)
	need(b, "xdotool")
	p := startPerson(b)
	out := filepath.Join(b.TempDir(), "typed.txt")
	pid, win := catTerminal(b, p.env(), "bench-target", "100x20+10+10", out)
	p.xdo("windowactivate", "--sync", p.term)
	p.xdo("mousemove", "--sync", "1270", "790")
	env := append(p.d.Env(), "HOME="+b.TempDir(), "LANG=C.UTF-8")
	rp := startRunEnv(b, env, "--display", p.d.Name(), "--mode", "unrestricted", "--dangerously-bypass-approvals", "--log-level", "warn", "--indicator=false")
	wid, _ := strconv.Atoi(win)
	target := map[string]any{"pid": pid, "window_id": wid}
	text200 := strings.Repeat("The quick brown fox jumps over the lazy dog ", 5)[:200]
	roundTrip := func(name string, args map[string]any) func(b *testing.B) {
		run := roundTripBench(rp, name, args, 5)
		return func(b *testing.B) {
			warmUp(b, rp, name, args, warmUpFor)
			run(b)
			p.untouched("after " + name)
		}
	}
	xdotool := func(args ...string) func(b *testing.B) {
		return func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				cmd := exec.Command("xdotool", args...)
				cmd.Env = p.env()
				start := time.Now()
				out, err := cmd.CombinedOutput()
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatalf("xdotool %v: %v: %s", args, err, out)
				}
			}
			b.StopTimer()
			reportPercentiles(b, lat)
		}
	}
	b.Run("cua/get_cursor_position", roundTrip("get_cursor_position", map[string]any{}))
	b.Run("cua/click", roundTrip("click", merge(target, map[string]any{"x": 30, "y": 30})))
	b.Run("cua/type_200", roundTrip("type_text", merge(target, map[string]any{"text": text200})))
	// xdotool moves the person's pointer and types at the core focus: it runs last. Its
	// click is the one a script sends: move there, click (no --sync: the pointer is there
	// already from the second call on, and --sync would wait for a move that never comes).
	b.Run("xdotool/click", xdotool("mousemove", "40", "40", "click", "1"))
	b.Run("xdotool/type_200", xdotool("type", "--window", win, text200))
	b.Run("xdotool/type_200_nodelay", xdotool("type", "--delay", "0", "--window", win, text200))
	os.Remove(out)
}

// warmUpFor is how long each figure's calls run before they are measured. On the two-core
// VMs this runs on, calls made back to back take about half a second to reach their
// steady speed, through go-sdk and through a bare Python MCP client alike (the floor of a
// call: 0.7 ms over the first 250 calls, 0.36–0.41 ms from the 500th on, in Python):
// without it, fewer calls measured the machine waking up more than the calls.
const warmUpFor = 2 * time.Second

// warmUp calls name with args back to back for d.
func warmUp(b *testing.B, rp *runProc, name string, args map[string]any, d time.Duration) {
	b.Helper()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	for end := time.Now().Add(d); time.Now().Before(end); {
		if res, err := rp.cs.CallTool(context.Background(), params); err != nil || res.IsError {
			b.Fatalf("warm-up %s: %v %s", name, err, text(res))
		}
	}
}
