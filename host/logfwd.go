package host

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"time"
)

// maxLogLine bounds one stderr line of the worker; longer lines are cut.
const maxLogLine = 256 << 10

// forwardLogs reads the worker's stderr until EOF and re-emits each JSON log line as a
// structured record of log, with the worker's attributes under the group "worker". Lines
// that are not JSON (a Go panic trace, a C library's warning) are logged as they are at
// Warn. It returns when r reaches EOF.
func forwardLogs(log *slog.Logger, pid int, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLogLine)
	wlog := log.With("worker_pid", pid)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var rec map[string]any
		if line[0] != '{' || json.Unmarshal(line, &rec) != nil {
			wlog.Warn("worker stderr", "line", string(line))
			continue
		}
		level := slog.LevelInfo
		if s, ok := rec["level"].(string); ok {
			_ = level.UnmarshalText([]byte(s))
		}
		msg, _ := rec["msg"].(string)
		ts := time.Now()
		if s, ok := rec["time"].(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				ts = t
			}
		}
		delete(rec, "level")
		delete(rec, "msg")
		delete(rec, "time")
		if !wlog.Enabled(context.Background(), level) {
			continue
		}
		r := slog.NewRecord(ts, level, msg, 0)
		attrs := make([]any, 0, len(rec))
		for k, v := range rec {
			attrs = append(attrs, slog.Any(k, v))
		}
		r.Add(slog.Group("worker", attrs...))
		_ = wlog.Handler().Handle(context.Background(), r)
	}
	if err := sc.Err(); err != nil {
		wlog.Warn("worker stderr", "err", err)
		_, _ = io.Copy(io.Discard, r)
	}
}
