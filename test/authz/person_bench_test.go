package authze2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cua-host/cua-host/authz"
	"github.com/cua-host/cua-host/host"
	"github.com/cua-host/cua-host/host/personui"
)

// BenchmarkConsentToDialog: from a call that needs the person's consent to the host's
// dialog shown on the display (mapped and fully visible: OnShown), through the whole stack —
// session channel, worker, the authorizer's consent request on the control channel, the
// host's provider, the dialog's own X connection. Each dialog then times out (a deny).
func BenchmarkConsentToDialog(b *testing.B) {
	requireDesktop(b)
	user := startApp(b, appB, "bench-dialog-user")
	place(b, user, 40, 500)
	shown := make(chan time.Time, 1)
	h := startSharedHost(b, host.Options{Consent: host.ConsentDialog(host.DialogConsentOptions{
		Display: disp.Name(), XAuthority: disp.XAuthority(), Timeout: 150 * time.Millisecond,
		OnShown: func(personui.Shown) {
			select {
			case shown <- time.Now():
			default:
			}
		},
	})})
	s := session(b, h, host.SessionSpec{Label: "bench-dialog", Mode: authz.Standard})
	args := jsonArgs(map[string]any{"text": "x", "pid": user.PID, "window_id": user.Window})
	var samples []time.Duration
	for b.Loop() {
		t0 := time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = s.Call(context.Background(), "type_text", args)
		}()
		select {
		case at := <-shown:
			samples = append(samples, at.Sub(t0))
		case <-time.After(10 * time.Second):
			b.Fatal("no dialog")
		}
		<-done
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(samples[len(samples)*99/100])/1e6, "p99-ms")
}
