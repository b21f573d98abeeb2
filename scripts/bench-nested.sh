#!/usr/bin/env bash
# bench-nested.sh prints the figures of a nested display (Xephyr in a window on a person's
# Xvfb of 1920x1200) beside a private one (Xvfb), both 1280x800, in one run, through the
# whole stack (go-sdk client -> cua-host run -> worker -> X server): time until run serves
# MCP, click and type_text into a launched terminal (p50 of 100 and 60), a full-screen
# 1280x800 get_desktop_state (p50 of 20), and the idle proportional set size of the
# display's processes and the worker; and `cua-host serve`'s create_session of a session in
# a new trust domain on each kind of display (p50 of 7, BenchmarkCreateSession). RUNS
# (default 3) repeats the whole comparison; the table shows the median of the runs.
set -euo pipefail
cd "$(dirname "$0")/.."
export CI="${CI:-1}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -run '^$' -bench 'BenchmarkDisplays|BenchmarkCreateSession' -benchtime 1x -count "${RUNS:-3}" ./test/e2e/ > "$out"
awk '
/^Benchmark(Displays|CreateSession)\// {
	split($1, p, "/"); kind = p[2]; sub(/-[0-9]+$/, "", kind)
	for (i = 3; i < NF; i++) if ($(i+1) ~ /-(ms|MiB)$/) { v[kind, $(i+1), ++n[kind, $(i+1)]] = $i; m[$(i+1)] = 1 }
}
function median(kind, metric,    k, a, i, j, t) {
	k = n[kind, metric]; for (i = 1; i <= k; i++) a[i] = v[kind, metric, i]
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return a[int((k + 1) / 2)]
}
END {
	split("run-ready-ms create-session-p50-ms click-p50-ms type15-p50-ms desktop1280-p50-ms idle-pss-MiB", order, " ")
	goal["click-p50-ms"] = "ratio <= 1.2"; goal["type15-p50-ms"] = "ratio <= 1.2"
	goal["run-ready-ms"] = "private no slower"
	goal["create-session-p50-ms"] = "nested <= 300 ms"
	printf "%-20s %12s %12s %8s   %s\n", "measure (median)", "private", "nested", "ratio", "goal"
	for (i = 1; i <= 6; i++) {
		k = order[i]; a = median("private", k); b = median("nested", k)
		printf "%-20s %12.2f %12.2f %8.2f   %s\n", k, a, b, (a > 0 ? b / a : 0), goal[k]
	}
}' "$out"
