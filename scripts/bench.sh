#!/usr/bin/env bash
# bench.sh prints cua-host's figures beside their baselines, in one run: medians (p50) and
# 99th percentiles where they matter, and ratios. The machines are small and noisy: compare
# within one run, and run it twice before believing a difference.
#
#   scripts/bench.sh            all sections
#   scripts/bench.sh core       one section: core, policy, authz, desktop, a11y, person, nested, mcp, shared
#   N=5000 scripts/bench.sh     iterations per protocol benchmark
set -euo pipefail
cd "$(dirname "$0")/.."
N="${N:-3000}"
section="${1:-all}"

want() { [ "$section" = all ] || [ "$section" = "$1" ]; }

# metric FILE BENCH UNIT: the p50 and p99 a benchmark reported.
metric() { awk -v b="$2" -v u="$3" '$1 ~ "^Benchmark"b"(-[0-9]+)?$" {for (i=1;i<=NF;i++) if ($(i+1)=="p50-"u) p50=$i; else if ($(i+1)=="p99-"u) p99=$i} END {printf "%s %s\n", p50, p99}' "$1"; }

if want core; then
  echo "== control and session channels (host ↔ worker, 2 cores), $N iterations each"
  out=$(mktemp)
  go test -run '^$' -bench 'SpawnReady|CreateSession|RoundTrip$|RoundTripRaw|JSONLinesBaseline|Revoke|Close' \
    -benchtime "${N}x" ./host/ > "$out"
  read -r ready_p50 ready_p99 < <(metric "$out" SpawnReady ms)
  read -r cs_p50 cs_p99 < <(metric "$out" CreateSession µs)
  read -r rt_p50 rt_p99 < <(metric "$out" RoundTrip µs)
  read -r raw_p50 raw_p99 < <(metric "$out" RoundTripRaw µs)
  read -r jl_p50 jl_p99 < <(metric "$out" JSONLinesBaseline µs)
  read -r rv_p50 rv_p99 < <(metric "$out" Revoke µs)
  read -r cl_p50 cl_p99 < <(metric "$out" Close ms)
  printf '%-44s %12s %12s   %s\n' "measure" "p50" "p99" "goal"
  printf '%-44s %10s ms %10s ms   %s\n' "spawn → Ready" "$ready_p50" "$ready_p99" "≤ 30 ms"
  printf '%-44s %10s µs %10s µs\n' "CreateSession (socketpair + SCM_RIGHTS)" "$cs_p50" "$cs_p99"
  printf '%-44s %10s µs %10s µs   %s\n' "no-op call round trip (Go API)" "$rt_p50" "$rt_p99" "≤ 50 µs, < baseline"
  printf '%-44s %10s µs %10s µs\n' "no-op round trip, raw envelopes" "$raw_p50" "$raw_p99"
  printf '%-44s %10s µs %10s µs\n' "baseline: no-op over JSON lines on a pipe" "$jl_p50" "$jl_p99"
  printf '%-44s %10s µs %10s µs   %s\n' "RevokeSession → Revoked" "$rv_p50" "$rv_p99" "≤ 50 ms"
  printf '%-44s %10s ms %10s ms\n' "Close → worker reaped" "$cl_p50" "$cl_p99"
  awk -v a="$rt_p50" -v b="$jl_p50" 'BEGIN {printf "round trip / JSON-lines baseline (p50): %.2f\n", a/b}'
  rm -f "$out"
  echo
fi

if want policy; then
  echo "== policy decisions (ns/op, allocs/op)"
  go test -run '^$' -bench 'Decide|OPAEvalProcess' -benchmem -benchtime 2s ./policy/ | grep -E '^Benchmark' \
    | awk '{printf "%-52s %14s ns/op %6s allocs/op\n", $1, $3, $(NF-1)}'
  echo "goals: YAML ≤ 1 µs, Rego ≤ 25 µs per decision"
  echo
fi

if want authz; then
  echo "== the worker's authorization pipeline per call (decode to decision, fake desktop; medians of 5 runs)"
  go test -run '^$' -bench 'BenchmarkAuthorize/' -benchmem -benchtime 20000x -count 5 ./worker/ | grep -E '^Benchmark' \
    | awk '{name=$1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkAuthorize\//, "", name); print name, $3, $(NF-1)}' | sort -k1,1 -k2,2n \
    | awk '{v[$1]=v[$1] " " $2; a[$1]=$3; n[$1]++} END {for (k in v) {split(v[k], x, " "); printf "%-36s %10s ns %6s allocs\n", k, x[int((n[k]+1)/2)], a[k]}}' | sort
  echo "goal: a window-target call (none|yaml/click_own_window) ≤ 5000 ns; noop is the floor (decode, sanitize, decide)"
  echo "the kernel's share on this machine (medians of 5): the one statx a window-target call must make, and a null system call"
  go test -run '^$' -bench 'ExeIDAt|NullSyscall' -benchtime 200000x -count 5 ./internal/procfs/ | grep -E '^Benchmark' \
    | awk '{name=$1; sub(/-[0-9]+$/, "", name); print name, $3}' | sort -k1,1 -k2,2n \
    | awk '{v[$1]=v[$1] " " $2; n[$1]++} END {for (k in v) {split(v[k], x, " "); printf "%-36s %10s ns\n", k, x[int((n[k]+1)/2)]}}' | sort
  echo
fi

if want desktop; then
  echo "== X11 backend vs xdotool, ImageMagick import and xwd"
  bash scripts/bench-desktop.sh
  echo
fi

if want a11y && [ -f scripts/bench-a11y.sh ]; then
  echo "== accessibility"
  bash scripts/bench-a11y.sh
  echo
fi

if want person; then
  echo "== the person's UI: consent dialog and Stop"
  bash scripts/bench-person.sh
  echo
  echo "== the sandbox of launched programs"
  bash scripts/bench-sandbox.sh
  echo
fi

if want nested; then
  echo "== a nested display beside a private one, whole stack"
  bash scripts/bench-nested.sh
  echo
fi

if want mcp && [ -f scripts/bench-mcp.sh ]; then
  echo "== MCP, whole stack"
  bash scripts/bench-mcp.sh
  echo
fi

if want shared; then
  echo "== background input on a display shared with a person, whole stack, beside xdotool"
  env -u N bash scripts/bench-shared.sh # N here is the protocol benchmarks' iterations
  echo
fi
