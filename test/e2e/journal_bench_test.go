package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkJournalMCP: move_cursor (an action) through the whole stack on three private
// displays — no journal, a journal without screenshots, a journal with a screenshot before
// and after every action — interleaved call by call. It reports each p50 and the
// journal's cost over the plain stack. scripts/bench-journal.sh runs it.
func BenchmarkJournalMCP(b *testing.B) {
	needDesktop(b)
	base := []string{"--display", "private", "--mode", "unrestricted", "--dangerously-bypass-approvals", "--log-level", "warn"}
	plain := startRun(b, base...)
	noShots := startRun(b, append(append([]string(nil), base...), "--journal", filepath.Join(b.TempDir(), "j1"), "--journal-screenshots=false")...)
	shots := startRun(b, append(append([]string(nil), base...), "--journal", filepath.Join(b.TempDir(), "j2"), "--journal-max-shots", "-1", "--journal-max-shot-bytes", "-1")...)
	ctx := context.Background()
	i := 0
	call := func(rp *runProc) time.Duration {
		i++
		params := &mcp.CallToolParams{Name: "move_cursor", Arguments: map[string]any{"scope": "desktop", "x": 100 + i%200, "y": 100 + i%150}}
		t0 := time.Now()
		res, err := rp.cs.CallTool(ctx, params)
		d := time.Since(t0)
		if err != nil || res.IsError {
			b.Fatalf("move_cursor: %v %v", err, text(res))
		}
		return d
	}
	for range 20 {
		call(plain)
		call(noShots)
		call(shots)
	}
	var p, n, s []time.Duration
	for b.Loop() {
		p = append(p, call(plain))
		n = append(n, call(noShots))
		s = append(s, call(shots))
	}
	p50 := func(d []time.Duration) float64 { slices.Sort(d); return float64(d[len(d)/2]) / 1e6 }
	pp, np, sp := p50(p), p50(n), p50(s)
	b.ReportMetric(pp, "p50-plain-ms")
	b.ReportMetric(np, "p50-journal-ms")
	b.ReportMetric(sp, "p50-shots-ms")
	b.ReportMetric((np-pp)*1e3, "overhead-journal-µs")
	b.ReportMetric(sp-pp, "overhead-shots-ms")
}
