package sandbox

import (
	"os/exec"
	"testing"
)

// BenchmarkStart measures what the sandbox adds to starting a program: /bin/true run
// directly, and run inside the sandbox the worker builds (hidden paths included).
// scripts/bench-sandbox.sh prints the two side by side.
func BenchmarkStart(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sandboxed", func(b *testing.B) {
		bwrap, err := Find()
		if err == nil {
			err = Probe(bwrap)
		}
		if err != nil {
			b.Skip(err)
		}
		for b.Loop() {
			spec := Spec{Hide: PersonSecrets("/root", 0, nil), Display: 0}
			if err := exec.Command(bwrap, spec.Args([]string{"/bin/true"})...).Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
