#!/usr/bin/env bash
# gen-proto.sh regenerates the Go code for proto/cua/v1 with buf and protoc-gen-go, both run
# through `go run` (local plugins only, no remote registry).
#   scripts/gen-proto.sh          regenerate in place
#   scripts/gen-proto.sh --check  regenerate into a temporary directory and fail if the
#                                 committed code differs
set -euo pipefail
cd "$(dirname "$0")/.."

BUF_VERSION=v1.75.0
buf() { go run "github.com/bufbuild/buf/cmd/buf@${BUF_VERSION}" "$@"; }

if [ "${1:-}" = "--check" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  buf generate -o "$tmp"
  status=0
  for f in "$tmp"/proto/cua/v1/*.pb.go; do
    committed="proto/cua/v1/$(basename "$f")"
    if ! cmp -s "$f" "$committed"; then
      echo "gen-proto: $committed is stale; run scripts/gen-proto.sh" >&2
      status=1
    fi
  done
  for f in proto/cua/v1/*.pb.go; do
    [ -e "$tmp/$f" ] || { echo "gen-proto: $f has no .proto source" >&2; status=1; }
  done
  exit $status
fi

buf lint
buf generate
