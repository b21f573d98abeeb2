#!/usr/bin/env bash
# test.sh is the project's test command: it installs what the tests need (scripts/setup.sh,
# idempotent), then checks formatting, vets, runs staticcheck, runs every test with the race
# detector (the generated protobuf code is checked by proto/cua/v1's tests against the
# checked-in descriptor set; scripts/gen-proto.sh --check adds the full buf round trip),
# and gives every fuzz target a few seconds.
#
#   scripts/test.sh              everything (what CI runs)
#   FUZZTIME=30s scripts/test.sh longer fuzz smoke
#   SKIP_SETUP=1 scripts/test.sh skip the package installation step
set -euo pipefail
cd "$(dirname "$0")/.."

[ -n "${SKIP_SETUP:-}" ] || bash scripts/setup.sh

# Tests treat a missing program as a failure, not a skip, when CI is set.
export CI="${CI:-1}"
FUZZTIME="${FUZZTIME:-3s}"

step() { printf '\n== %s\n' "$*"; }

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "not gofmt-clean:" >&2
  echo "$unformatted" >&2
  exit 1
fi

step "go vet"
go vet ./...

step "staticcheck"
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

step "go test -race"
testlog=$(mktemp)
fuzzlog=$(mktemp)
trap 'rm -f "$testlog" "$fuzzlog"' EXIT
if ! go test -race -count=1 -timeout 20m ./... 2>&1 | tee "$testlog"; then
  # A log's tail is often a goroutine dump; say at the end what failed and what was
  # still running when a package timed out.
  echo >&2
  echo "== what failed" >&2
  grep -E -A8 '^(--- FAIL|panic: test timed out|running tests:)' "$testlog" | grep -v '^goroutine ' | head -n 80 >&2 || true
  grep -E '^(FAIL|ok) ' "$testlog" | grep '^FAIL' >&2 || true
  exit 1
fi

step "fuzz smoke (${FUZZTIME} each)"
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "-- $pkg $target"
    ok=0
    for attempt in 1 2; do
      if go test -run='^$' -fuzz="^${target}\$" -fuzztime="$FUZZTIME" "$pkg" >"$fuzzlog" 2>&1; then
        ok=1
        break
      fi
      # A failing input is always written to testdata/fuzz and fails at once; anything
      # else (a fuzz worker starved or killed on a small machine) gets one more try.
      grep -q 'Failing input written to' "$fuzzlog" && break
      echo "   (attempt $attempt did not finish; its output:)" && tail -n 20 "$fuzzlog"
    done
    if [ "$ok" -ne 1 ]; then
      echo "fuzz target $target of $pkg failed:" >&2
      tail -n 40 "$fuzzlog" >&2
      exit 1
    fi
  done
done

step "ok"
