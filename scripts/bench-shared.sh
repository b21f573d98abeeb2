#!/usr/bin/env bash
# bench-shared.sh measures background input through the whole stack (go-sdk client → stdio
# → `cua-host run`'s proxy → worker → X server) on a display shared with a person — Xvfb
# with a cookie and openbox, their terminal focused, their pointer parked — into a
# terminal the person started, beside the same input sent by xdotool as a script sends
# it, one process per action. It prints p50 and p99 of each and the ratios.
#
#   scripts/bench-shared.sh               500 calls per cua-host figure, 50 per xdotool one
#   CN=2000 N=100 scripts/bench-shared.sh more calls
#
# cua-host's figures are of calls made back to back for a while: each figure's calls run
# for 2 s before they are measured. On a two-core VM, calls take about half a second to
# reach their steady speed (the floor of a call: about twice as long over the first 250
# calls), through any client. xdotool starts a process per action and sleeps in each.
#
# Goals: a background click ≥ 50× faster than xdotool's, 200 characters ≥ 50× faster.
set -euo pipefail
cd "$(dirname "$0")/.."
N="${N:-50}"
CN="${CN:-500}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test ./test/e2e -run '^$' -count 1 -timeout 15m -benchtime "${CN}x" -bench 'BenchmarkSharedDisplay/cua/' > "$out"
go test ./test/e2e -run '^$' -count 1 -timeout 15m -benchtime "${N}x" -bench 'BenchmarkSharedDisplay/xdotool/' >> "$out"
# m NAME: p50 and p99 (µs) of sub-benchmark NAME.
m() { awk -v b="BenchmarkSharedDisplay/$1" '$1 ~ "^"b"(-[0-9]+)?$" {for (i=1;i<=NF;i++) {if ($(i+1)=="p50-µs") p50=$i; if ($(i+1)=="p99-µs") p99=$i}} END {printf "%s %s\n", p50, p99}' "$out"; }
read -r cur_p50 cur_p99 < <(m cua/get_cursor_position)
read -r click_p50 click_p99 < <(m cua/click)
read -r type_p50 type_p99 < <(m cua/type_200)
read -r xclick_p50 xclick_p99 < <(m xdotool/click)
read -r xtype_p50 xtype_p99 < <(m xdotool/type_200)
read -r xtype0_p50 xtype0_p99 < <(m xdotool/type_200_nodelay)
ms() { awk -v v="$1" 'BEGIN {printf "%.2f ms", v/1000}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.1f×", a/b; else print "-"}'; }
printf '%-52s %12s %12s   %s\n' "measure ($CN cua-host calls, $N xdotool runs)" "p50" "p99" "xdotool p50 / cua-host p50"
printf '%-52s %12s %12s\n' "cua-host get_cursor_position (floor of a call)" "$(ms "$cur_p50")" "$(ms "$cur_p99")"
printf '%-52s %12s %12s\n' "cua-host background click into the window" "$(ms "$click_p50")" "$(ms "$click_p99")"
printf '%-52s %12s %12s   %s (goal ≥ 50×)\n' "xdotool mousemove + click (moves the person's pointer)" "$(ms "$xclick_p50")" "$(ms "$xclick_p99")" "$(ratio "$xclick_p50" "$click_p50")"
printf '%-52s %12s %12s\n' "cua-host background type_text, 200 characters" "$(ms "$type_p50")" "$(ms "$type_p99")"
printf '%-52s %12s %12s   %s (goal ≥ 50×)\n' "xdotool type --window, 200 characters (12 ms/key)" "$(ms "$xtype_p50")" "$(ms "$xtype_p99")" "$(ratio "$xtype_p50" "$type_p50")"
printf '%-52s %12s %12s   %s\n' "xdotool type --delay 0 --window, 200 characters" "$(ms "$xtype0_p50")" "$(ms "$xtype0_p99")" "$(ratio "$xtype0_p50" "$type_p50")"
