package authze2e

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
)

// BenchmarkLaunchApp: launch_app of a declared application through the whole stack, until
// its window is mapped (the result names it), with the sandbox and without it, on the
// session's private display. scripts/bench-sandbox.sh prints the two side by side.
func BenchmarkLaunchApp(b *testing.B) {
	for _, bc := range []struct {
		name     string
		disabled bool
	}{{"sandboxed", false}, {"unsandboxed", true}} {
		b.Run(bc.name, func(b *testing.B) {
			requireDesktop(b)
			h := startHost(b, host.Options{Sandbox: host.SandboxOptions{Disabled: bc.disabled}})
			s := session(b, h, host.SessionSpec{Label: "bench-launch-" + bc.name, Mode: authz.Standard})
			log := filepath.Join(b.TempDir(), "bench.jsonl")
			id := declareApp(b, "bench-launch-"+bc.name, xevlogArgv(appA, "bench-launch", log), "")
			args := map[string]any{"name": id}
			var samples []time.Duration
			for b.Loop() {
				t0 := time.Now()
				res := call(b, s, "launch_app", args)
				d := time.Since(t0)
				var l struct {
					PID       int      `json:"pid"`
					WindowIDs []uint32 `json:"window_ids"`
				}
				if err := json.Unmarshal(res.Structured, &l); err != nil || len(l.WindowIDs) == 0 {
					b.Fatalf("launch_app: %s %s", res.Outcome, res.Text())
				}
				samples = append(samples, d)
				b.StopTimer()
				_ = syscall.Kill(l.PID, syscall.SIGKILL)
				waitExit(b, l.PID, 5*time.Second)
				b.StartTimer()
			}
			slices.Sort(samples)
			b.ReportMetric(float64(samples[len(samples)/2])/1e6, "p50-ms")
			b.ReportMetric(float64(samples[len(samples)*99/100])/1e6, "p99-ms")
		})
	}
}
