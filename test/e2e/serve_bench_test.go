package e2e

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cua-host/cua-host/host/serve"
)

// BenchmarkCreateSession measures `cua-host serve`'s create_session for a session in a new
// trust domain, which starts its display, window manager, session bus and worker and binds
// the session: on a private display and on a nested one (in a window on a person's display
// of 1920×1200), both 1280×800. Each create is answered once the session can take calls;
// the domain is revoked before the next. scripts/bench-nested.sh prints the two side by
// side with `cua-host run`'s start.
func BenchmarkCreateSession(b *testing.B) {
	needDesktop(b)
	need(b, "Xephyr")
	const creates = 7
	for _, kind := range []string{"private", "nested"} {
		b.Run(kind, func(b *testing.B) {
			env := append(startBenchPerson(b), "HOME="+b.TempDir(), "LANG=C.UTF-8")
			cmd := exec.Command(cuaHost, "serve", "--log-level", "warn", "--screen", "1280x800",
				"--runtime-dir", b.TempDir())
			cmd.Env = append(os.Environ(), env...)
			cmd.Stderr = os.Stderr
			in, err := cmd.StdinPipe()
			if err != nil {
				b.Fatal(err)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() {
				in.Close()
				done := make(chan struct{})
				go func() { cmd.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					cmd.Process.Kill()
					<-done
				}
			})
			c := serve.NewClient(out, in, serve.ClientOptions{})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			for b.Loop() {
				lat := make([]time.Duration, 0, creates)
				for i := range creates + 1 {
					label := kind + strconv.Itoa(i)
					start := time.Now()
					if _, err := c.CreateSession(ctx, serve.CreateSessionParams{Label: label, TrustDomain: label, Display: kind}); err != nil {
						b.Fatalf("create_session %s: %v", label, err)
					}
					if i > 0 { // the first pays for the page cache of every program
						lat = append(lat, time.Since(start))
					}
					if _, err := c.RevokeSession(ctx, label); err != nil {
						b.Fatalf("revoke_session %s: %v", label, err)
					}
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "create-session-p50-ms")
			}
		})
	}
}
