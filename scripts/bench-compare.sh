#!/usr/bin/env bash
# bench-compare.sh runs the same figures on an earlier revision and on the working tree, in
# one go, and prints them side by side: authorization per call, the no-op round trip, and
# typing 200 ASCII and 200 mixed characters into xterm against xdotool. Medians of COUNT
# runs; the machines are small and noisy, so the two trees' Go benchmark runs alternate.
#
#   scripts/bench-compare.sh              against the revision before the last 20 commits
#   scripts/bench-compare.sh REV          against REV
#   COUNT=7 scripts/bench-compare.sh REV  more runs per benchmark
#   TYPING=0 scripts/bench-compare.sh REV the Go benchmarks only (no display needed)
#   BENCHTIME=20000x ...                  fewer authorization calls per run (default
#                                         200000x: a no-op call takes about 1 µs, and
#                                         shorter runs measure the warm-up more than the
#                                         call; the round trip keeps 20000x)
#
# The earlier revision is checked out in a temporary worktree; benchmarks it lacks print "-".
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-HEAD~20}"
COUNT="${COUNT:-5}"
rev=$(git rev-parse --short "$base")
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/before" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/before" "$rev" >/dev/null 2>&1
after=$PWD
before="$tmp/before"

# gobench PKG PATTERN OUT_BEFORE OUT_AFTER BENCHTIME: runs the benchmarks matching PATTERN COUNT
# times in each tree, alternating trees run by run (the machine's drift falls on both), and
# writes each tree's median ns/op per benchmark, "NAME NS".
gobench() {
  local raw_b raw_a
  raw_b=$(mktemp) raw_a=$(mktemp)
  for _ in $(seq "$COUNT"); do
    (cd "$after" && go test -run '^$' -bench "$2" -benchtime "$5" -count 1 "$1" 2>/dev/null) >>"$raw_a" || true
    (cd "$before" && go test -run '^$' -bench "$2" -benchtime "$5" -count 1 "$1" 2>/dev/null) >>"$raw_b" || true
  done
  median "$raw_b" >"$3"
  median "$raw_a" >"$4"
  rm -f "$raw_b" "$raw_a"
}

# median FILE: per benchmark of go test output FILE, the median ns/op.
median() {
  awk '/^Benchmark/ {name=$1; sub(/-[0-9]+$/, "", name); print name, $3}' "$1" | sort -k1,1 -k2,2n |
    awk '{v[$1] = v[$1] " " $2; n[$1]++} END {for (k in v) {split(v[k], a, " "); print k, a[int((n[k]+1)/2)]}}' | sort
}

printf '== %s (before) vs working tree (after), medians of %s runs\n\n' "$rev" "$COUNT"
printf '%-56s %12s %12s %8s\n' "benchmark" "before" "after" "after/before"
for spec in "./worker/ BenchmarkAuthorize/(none|yaml)/(noop|click_own_window)$ ${BENCHTIME:-200000x}" "./host/ BenchmarkRoundTrip$ 20000x"; do
  read -r pkg pattern benchtime <<<"$spec"
  gobench "$pkg" "$pattern" "$tmp/b.txt" "$tmp/a.txt" "$benchtime"
  join -a 1 -e - -o 0,1.2,2.2 "$tmp/a.txt" "$tmp/b.txt" |
    while read -r name a b; do
      ratio=-
      [ "$b" != - ] && ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", a/b}')
      printf '%-56s %10s ns %10s ns %8s\n' "$name" "$b" "$a" "$ratio"
    done
done
echo "goals: authorization of a window-target call ≤ 4000 ns on a quiet machine; authorization and the no-op round trip no slower"

[ "${TYPING:-1}" = 0 ] && exit 0

# Typing: each tree's own desktop benchmark (xterm on a private Xvfb, against xdotool).
typing() {
  (cd "$1" && go build -o "$tmp/xevlog.$2" ./test/xevlog && go build -o "$tmp/benchdesktop.$2" ./test/benchdesktop) || return 0
  "$tmp/benchdesktop.$2" -xevlog "$tmp/xevlog.$2" -n 3 -type-runs "$COUNT" 2>/dev/null |
    awk '/^type_text 200/ && !seen[$3]++ {
      d = 0; ours = ""; ref = ""; note = ""
      for (i = 4; i <= NF; i++) {
        if ($i ~ /^[0-9.]+(µs|ms|s)$/) { if (d == 0) ours = $i; else if (d == 1) ref = $i; d++ }
        if ($i == "exact") { for (j = i; j <= NF; j++) note = note " " $j; break }
      }
      print "type_text 200 " $3 " chars|" ours "|" ref "|" note
    }'
}
echo
printf '%-34s %-10s %12s %12s %8s  %s\n' "typing (first delivery of each tree)" "tree" "median" "xdotool" "ratio" "note"
for t in before after; do
  dir=$before
  [ "$t" = after ] && dir=$after
  typing "$dir" "$t" | while IFS='|' read -r op ours ref note; do
    printf '%-34s %-10s %12s %12s %8s  %s\n' "$op" "$t" "$ours" "$ref" \
      "$(awk -v o="$ours" -v r="$ref" 'function ms(s) {if (s ~ /ms$/) return s+0; if (s ~ /µs$/) return (s+0)/1000; return (s+0)*1000} BEGIN {printf "%.1f×", ms(r)/ms(o)}')" "$note"
  done
done
echo "goal: typing 200 mixed characters ≥ 10× faster than xdotool, exact in every run"
