#!/usr/bin/env bash
# bench-journal.sh prints the journal's cost per call beside the same calls without a
# journal, in one run: medians (p50) of interleaved calls, and the differences and ratios.
#
#   scripts/bench-journal.sh          N=3000 Go API calls, M=300 MCP calls per stack
#   N=10000 M=500 scripts/bench-journal.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N="${N:-3000}"
M="${M:-300}"

# field FILE BENCH UNIT: the value a benchmark reported for UNIT.
field() { awk -v b="$2" -v u="$3" '$1 ~ "^Benchmark"b"(-[0-9]+)?$" {for (i=1;i<=NF;i++) if ($(i+1)==u) v=$i} END {print v}' "$1"; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "== Go API, in-process host and test worker, $N interleaved calls each (no screenshots)"
go test -run '^$' -bench 'JournalOverhead' -benchtime "${N}x" ./host/ > "$out"
printf '%-34s %14s %14s %14s %8s   %s\n' "call" "no journal" "journal" "overhead" "ratio" "goal"
for c in read_only action; do
  off=$(field "$out" "JournalOverhead/$c" p50-off-µs)
  on=$(field "$out" "JournalOverhead/$c" p50-on-µs)
  ov=$(field "$out" "JournalOverhead/$c" overhead-µs)
  goal="≤ 20 µs"
  printf '%-34s %11s µs %11s µs %11s µs %8s   %s\n' "$c" "$off" "$on" "$ov" "$(awk -v a="$on" -v b="$off" 'BEGIN{printf "%.2f", a/b}')" "$goal"
done

echo
echo "== MCP, whole stack on private displays: move_cursor, $M interleaved calls per stack"
go test -run '^$' -bench 'JournalMCP' -benchtime "${M}x" ./test/e2e/ > "$out"
plain=$(field "$out" JournalMCP p50-plain-ms)
jr=$(field "$out" JournalMCP p50-journal-ms)
sh=$(field "$out" JournalMCP p50-shots-ms)
printf '%-34s %11s ms\n' "no journal" "$plain"
printf '%-34s %11s ms   overhead %s µs, ratio %s\n' "journal, no screenshots" "$jr" "$(field "$out" JournalMCP overhead-journal-µs)" "$(awk -v a="$jr" -v b="$plain" 'BEGIN{printf "%.2f", a/b}')"
printf '%-34s %11s ms   overhead %s ms, ratio %s   goal ≤ 15 ms\n' "journal, before/after screenshots" "$sh" "$(field "$out" JournalMCP overhead-shots-ms)" "$(awk -v a="$sh" -v b="$plain" 'BEGIN{printf "%.2f", a/b}')"
