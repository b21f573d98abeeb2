#!/usr/bin/env bash
# fuzz.sh runs every `go test -fuzz` target of the module for a while, then the two
# protocol harnesses (test/controlfuzz, test/sessionfuzz) for as long, and prints a
# summary. It exits non-zero when a target found a failing input or a harness found a
# violation.
#
#   scripts/fuzz.sh            30 s per target and per harness
#   scripts/fuzz.sh -t 5m      5 minutes each
#   scripts/fuzz.sh -t 10m -j 1 -r 'proto/|policy' -H ''
#                              only the targets whose "package Target" matches the
#                              extended regexp, one fuzz worker each (the machine's other
#                              cores stay free), no harness
#
# -H lists the harnesses to run (default "controlfuzz sessionfuzz").
#
# The fuzz targets are whatever `go test -list '^Fuzz' ./...` finds, so targets added
# later (manifests, tool arguments, …) are picked up without editing this script. A
# failing input is written by `go test` under the package's testdata/fuzz/; harness
# reproducers go to the directory printed in the summary. Logs: $FUZZ_LOGS (default: a
# new temp dir).
set -uo pipefail
cd "$(dirname "$0")/.."

fuzztime=30s
workers=""
match=""
harnesses="controlfuzz sessionfuzz"
while getopts "t:j:r:H:h" opt; do
  case "$opt" in
    t) fuzztime="$OPTARG" ;;
    j) workers="$OPTARG" ;;
    r) match="$OPTARG" ;;
    H) harnesses="$OPTARG" ;;
    *) sed -n '2,21p' "$0"; exit 2 ;;
  esac
done

logs="${FUZZ_LOGS:-$(mktemp -d -t cua-fuzz-XXXXXX)}"
mkdir -p "$logs"
summary=()
failed=0

printf '== fuzz targets (%s each), logs in %s\n' "$fuzztime" "$logs"
for pkg in $(go list ./...); do
  targets=$(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true)
  for target in $targets; do
    if [ -n "$match" ] && ! echo "${pkg#github.com/cua-host/cua-host/} $target" | grep -Eq -- "$match"; then
      continue
    fi
    log="$logs/$(echo "$pkg" | tr '/' '_')_${target}.log"
    printf -- '-- %s %s … ' "${pkg#github.com/cua-host/cua-host/}" "$target"
    start=$(date +%s)
    if go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" ${workers:+-parallel="$workers"} "$pkg" >"$log" 2>&1; then
      result=ok
    elif ! grep -q 'Failing input written to' "$log" && grep -q '^    context deadline exceeded$' "$log"; then
      # Go 1.26's fuzz coordinator can report its own -fuzztime deadline as a failure
      # (golang/go#75804, fixed in Go 1.27); no input was found.
      result=ok-deadline
    else
      result=FAIL
      failed=1
    fi
    took=$(( $(date +%s) - start ))
    execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | awk '{print $2}')
    echo "$result (${took}s, ${execs:-?} execs)"
    summary+=("$(printf '%-6s %-40s %-32s %10s execs' "$result" "${pkg#github.com/cua-host/cua-host/}" "$target" "${execs:-?}")")
    if [ "$result" = FAIL ]; then
      grep -E 'Failing input written to|--- FAIL|panic:' "$log" | head -5 | sed 's/^/       /'
    fi
  done
done

bindir="$logs/bin"
mkdir -p "$bindir"
for h in $harnesses; do
  printf '\n== %s (%s)\n' "$h" "$fuzztime"
  if ! go build -o "$bindir/$h" "./test/$h"; then
    summary+=("$(printf '%-6s %-40s' FAIL "test/$h (build)")")
    failed=1
    continue
  fi
  out="$logs/$h-out"
  mkdir -p "$out"
  if "$bindir/$h" -duration "$fuzztime" -out "$out" >"$logs/$h.log" 2>&1; then
    result=ok
  else
    result=FAIL
    failed=1
  fi
  awk -v h="$h" 'index($0, h": ") == 1 || /^violations:/ {print} /^known deviations/ {k=1} /^violations:/ {k=0} k {print}' "$logs/$h.log"
  grep -E '^VIOLATION' "$logs/$h.log" | head -10
  line=$(grep -E "^$h:" "$logs/$h.log" | tail -1)
  viol=$(grep -E '^violations:' "$logs/$h.log" | tail -1)
  summary+=("$(printf '%-6s %-40s %s; %s' "$result" "test/$h" "${line#"$h": }" "$viol")")
done

printf '\n== summary\n'
printf '%s\n' "${summary[@]}"
if [ "$failed" -ne 0 ]; then
  echo "fuzz: FAILED (logs in $logs)"
  exit 1
fi
echo "fuzz: ok (logs in $logs)"
