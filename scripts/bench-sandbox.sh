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
ns() { awk -v b="$1" '$1 ~ "^"b {print $3; exit}' "$out"; }
p50() { awk -v b="$1" '$1 ~ "^"b {for (i=1;i<=NF;i++) if ($(i+1)=="p50-ms") {print $i; exit}}' "$out"; }
direct=$(ns BenchmarkStart/direct)
boxed=$(ns BenchmarkStart/sandboxed)
lon=$(p50 BenchmarkLaunchApp/sandboxed)
loff=$(p50 BenchmarkLaunchApp/unsandboxed)
awk -v d="$direct" -v s="$boxed" -v on="$lon" -v off="$loff" 'BEGIN {
	printf "%-58s %12s\n", "measure", "value"
	printf "%-58s %9.2f ms\n", "start /bin/true directly (median of 30)", d / 1e6
	printf "%-58s %9.2f ms\n", "start /bin/true in the sandbox (median of 30)", s / 1e6
	printf "%-58s %9.2f ms   (goal: at most 20 ms)\n", "  added by the sandbox", (s - d) / 1e6
	printf "%-58s %9.2f ms\n", "launch_app -> window mapped, unsandboxed (p50 of 15)", off
	printf "%-58s %9.2f ms\n", "launch_app -> window mapped, sandboxed (p50 of 15)", on
	printf "%-58s %9.2f ms\n", "  added by the sandbox", on - off
}'
