package sandbox

import (
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkStart measures what the sandbox adds to starting a program: /bin/true run
// directly, and run inside the sandbox the worker builds (the person's secrets hidden). It
// reports the median wall time and the median CPU time of the started process tree (user
// and system, from wait4), which a loaded machine disturbs less. scripts/bench-sandbox.sh
// prints the two side by side.
func BenchmarkStart(b *testing.B) {
	run := func(b *testing.B, argv func() []string) {
		var wall, cpu []time.Duration
		for b.Loop() {
			args := argv()
			cmd := exec.Command(args[0], args[1:]...)
			t0 := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
			wall = append(wall, time.Since(t0))
			cpu = append(cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
		slices.Sort(wall)
		slices.Sort(cpu)
		b.ReportMetric(float64(wall[len(wall)/2])/1e6, "wall-p50-ms")
		b.ReportMetric(float64(cpu[len(cpu)/2])/1e6, "cpu-p50-ms")
	}
	b.Run("direct", func(b *testing.B) {
		run(b, func() []string { return []string{"/bin/true"} })
	})
	b.Run("sandboxed", func(b *testing.B) {
		bwrap, err := Find()
		if err == nil {
			err = Probe(bwrap)
		}
		if err != nil {
			b.Skip(err)
		}
		run(b, func() []string {
			spec := Spec{Hide: PersonSecrets("/root", 0, nil), Display: 0}
			return append([]string{bwrap}, spec.Args([]string{"/bin/true"})...)
		})
	})
}
