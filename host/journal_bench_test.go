package host

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkJournalOverhead: the same call on two hosts, one keeping a journal without
// screenshots and one not, interleaved so both see the same machine; it reports each p50
// and the difference, the journal's cost per call. read_only is noop, recorded once after
// it ran (one entry, no round trip); action is marker (it appends a line to a file), which
// runs only once the host has acknowledged its begin record, then sends its end record.
func BenchmarkJournalOverhead(b *testing.B) {
	plain := newSession(b, startHost(b, Options{}), "plain")
	jh := startHost(b, Options{Journal: &JournalOptions{Dir: b.TempDir()}})
	journaled := newSession(b, jh, "journaled")
	ctx := context.Background()
	marker := filepath.Join(b.TempDir(), "m")
	for _, bc := range []struct {
		name string
		tool string
		args json.RawMessage
	}{
		{"read_only", "noop", nil},
		{"action", "marker", mustJSON(map[string]any{"path": marker, "marker": "x"})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			call := func(s *Session) time.Duration {
				t0 := time.Now()
				res, err := s.Call(ctx, bc.tool, bc.args)
				d := time.Since(t0)
				if err != nil || res.Outcome != Completed {
					b.Fatalf("%s = %+v, %v", bc.tool, res, err)
				}
				return d
			}
			for range 200 { // warm up both
				call(plain)
				call(journaled)
			}
			var off, on []time.Duration
			for b.Loop() {
				off = append(off, call(plain))
				on = append(on, call(journaled))
			}
			slices.Sort(off)
			slices.Sort(on)
			p50 := func(s []time.Duration) float64 { return float64(s[len(s)/2]) / 1e3 }
			b.ReportMetric(p50(off), "p50-off-µs")
			b.ReportMetric(p50(on), "p50-on-µs")
			b.ReportMetric(p50(on)-p50(off), "overhead-µs")
		})
	}
}
