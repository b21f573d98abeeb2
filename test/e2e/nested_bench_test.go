package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cua-host/cua-host/host/display"
)

// BenchmarkDisplays compares a nested display with a private one through the whole stack
// (go-sdk client → `cua-host run` → worker → X server), both at 1280×800, the nested one on
// a person's display of 1920×1200 whose parked pointer stays outside its window: the time
// from starting `cua-host run` until it serves MCP, click and type_text into a terminal the
// session launched, a full-screen (1280×800) get_desktop_state, and the proportional set
// size of the display's processes (X server, window manager, buses) and the worker while
// idle. scripts/bench-nested.sh prints the two side by side.
func BenchmarkDisplays(b *testing.B) {
	needDesktop(b)
	need(b, "Xephyr", "xdotool")
	for _, kind := range []string{"private", "nested"} {
		b.Run(kind, func(b *testing.B) {
			var env []string
			if kind == "nested" {
				env = append(startBenchPerson(b), "HOME="+b.TempDir(), "LANG=C.UTF-8")
			}
			args := []string{"--display", kind, "--screen", "1280x800", "--mode", "unrestricted", "--dangerously-bypass-approvals", "--log-level", "warn"}
			t0 := time.Now()
			rp := startRunEnv(b, env, args...)
			ready := time.Since(t0)
			_, health := rp.mustCall(b, "health_report", nil)
			worker := int(number(health, "pid"))
			_, launched := rp.mustCall(b, "launch_app", map[string]any{"name": "xterm",
				"additional_arguments": []string{"-geometry", "100x30+10+10", "-e", "sh", "-c", "stty -echo; exec cat > /dev/null"}})
			ids, _ := launched["window_ids"].([]any)
			if len(ids) == 0 {
				b.Fatalf("launch_app xterm: %v", launched)
			}
			target := map[string]any{"pid": number(launched, "pid"), "window_id": int(ids[0].(float64))}
			with := func(kv ...any) map[string]any {
				m := map[string]any{"pid": target["pid"], "window_id": target["window_id"]}
				for i := 0; i+1 < len(kv); i += 2 {
					m[kv[i].(string)] = kv[i+1]
				}
				return m
			}
			ctx := context.Background()
			measure := func(name string, args map[string]any, n int) time.Duration {
				params := &mcp.CallToolParams{Name: name, Arguments: args}
				lat := make([]time.Duration, 0, n)
				for i := range n + 10 {
					start := time.Now()
					res, err := rp.cs.CallTool(ctx, params)
					if err != nil || res.IsError {
						b.Fatalf("%s: %v %v", name, err, text(res))
					}
					if i >= 10 { // the first calls pay for lazy set-up on every side
						lat = append(lat, time.Since(start))
					}
				}
				slices.Sort(lat)
				return lat[len(lat)/2]
			}
			time.Sleep(300 * time.Millisecond) // the terminal's shell starts
			for b.Loop() {
				click := measure("click", with("x", 40, "y", 40), 100)
				typed := measure("type_text", with("text", "Hello, World 42"), 60)
				shot := measure("get_desktop_state", map[string]any{}, 20)
				b.ReportMetric(float64(click.Microseconds())/1000, "click-p50-ms")
				b.ReportMetric(float64(typed.Microseconds())/1000, "type15-p50-ms")
				b.ReportMetric(float64(shot.Microseconds())/1000, "desktop1280-p50-ms")
			}
			b.ReportMetric(float64(ready.Milliseconds()), "run-ready-ms")
			time.Sleep(time.Second) // idle
			b.ReportMetric(float64(pssTree(b, rp.cmd.Process.Pid, worker))/1024, "idle-pss-MiB")
		})
	}
}

// startBenchPerson starts a person's display of 1920×1200 with a window manager, parks its
// pointer in the bottom right corner, where a nested window of 1280×800 does not reach, and
// returns its environment (DISPLAY, XAUTHORITY).
func startBenchPerson(b *testing.B) []string {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := display.Start(ctx, display.Options{WindowManager: true, Width: 1920, Height: 1200})
	if err != nil {
		b.Fatalf("start the person's display: %v", err)
	}
	b.Cleanup(func() { d.Close() })
	cmd := exec.Command("xdotool", "mousemove", "--sync", "1910", "1190")
	cmd.Env = append(os.Environ(), d.Env()...)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("xdotool mousemove: %v: %s", err, out)
	}
	return d.Env()
}

// pssTree sums the proportional set size (kB, /proc/PID/smaps_rollup) of every descendant
// of root — the worker, the display's server, window manager and buses the run started —
// leaving out the run process itself and the MCP proxy, which do not depend on the display.
func pssTree(b *testing.B, root, worker int) int {
	b.Helper()
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(fields) > 1 {
			ppid, _ := strconv.Atoi(fields[1])
			children[ppid] = append(children[ppid], pid)
		}
	}
	total := 0
	var walk func(pid int)
	walk = func(pid int) {
		for _, c := range children[pid] {
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c))
			if strings.Contains(string(comm), "__mcp-proxy") && c != worker {
				continue
			}
			total += pss(c)
			walk(c)
		}
	}
	walk(root)
	return total
}

// pss reads Pss (kB) from /proc/PID/smaps_rollup; 0 when it cannot.
func pss(pid int) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}
