#!/usr/bin/env bash
# bench-sandbox.sh prints what the sandbox of launched programs costs, in one run, beside
# the time of the launch it is part of:
#   - starting /bin/true directly and inside the sandbox the worker builds (the person's
#     secrets hidden), median of 30;
#   - launch_app of a small X client through the whole stack until its window is mapped,
#     with and without the sandbox, p50 over 15, on a private Xvfb the benchmark starts.
set -euo pipefail
cd "$(dirname "$0")/.."
export CI="${CI:-1}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -run '^$' -bench "BenchmarkStart" -benchtime 30x -count 1 ./internal/sandbox/ > "$out"
go test -run '^$' -bench 'BenchmarkLaunchApp' -benchtime 15x -count 1 ./test/authz/ >> "$out"
metric() { awk -v b="$1" -v m="$2" '$1 ~ "^"b {for (i=1;i<=NF;i++) if ($(i+1)==m) {print $i; exit}}' "$out"; }
awk -v dw="$(metric BenchmarkStart/direct wall-p50-ms)" -v sw="$(metric BenchmarkStart/sandboxed wall-p50-ms)" \
    -v dc="$(metric BenchmarkStart/direct cpu-p50-ms)" -v sc="$(metric BenchmarkStart/sandboxed cpu-p50-ms)" \
    -v on="$(metric BenchmarkLaunchApp/sandboxed p50-ms)" -v off="$(metric BenchmarkLaunchApp/unsandboxed p50-ms)" 'BEGIN {
	printf "%-58s %12s %12s\n", "measure (median)", "wall", "cpu"
	printf "%-58s %9.2f ms %9.2f ms\n", "start /bin/true directly (30 runs)", dw, dc
	printf "%-58s %9.2f ms %9.2f ms\n", "start /bin/true in the sandbox (30 runs)", sw, sc
	printf "%-58s %9.2f ms %9.2f ms   (goal: at most 20 ms)\n", "  added by the sandbox", sw - dw, sc - dc
	printf "%-58s %9.2f ms\n", "launch_app -> window mapped, unsandboxed (15 runs)", off
	printf "%-58s %9.2f ms\n", "launch_app -> window mapped, sandboxed (15 runs)", on
	printf "%-58s %9.2f ms\n", "  added by the sandbox", on - off
}'
