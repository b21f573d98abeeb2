#!/usr/bin/env bash
# gen-proto.sh regenerates the Go code for proto/cua/v1 with buf and protoc-gen-go, both run
# through `go run` (local plugins only, no remote registry), and the descriptor set the
# cheap staleness test regenerates from (proto/cua/v1/descriptor.binpb, with
# descriptor.sha256: the SHA-256 of the .proto files it was built from).
#   scripts/gen-proto.sh          regenerate in place
#   scripts/gen-proto.sh --check  regenerate into a temporary directory and fail if the
#                                 committed code, descriptor set or checksums differ
set -euo pipefail
cd "$(dirname "$0")/.."

BUF_VERSION=v1.75.0
buf() { go run "github.com/bufbuild/buf/cmd/buf@${BUF_VERSION}" "$@"; }
checksums() { (cd proto/cua/v1 && sha256sum -- *.proto); }

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
  buf build -o "$tmp/descriptor.binpb"
  cmp -s "$tmp/descriptor.binpb" proto/cua/v1/descriptor.binpb ||
    { echo "gen-proto: proto/cua/v1/descriptor.binpb is stale; run scripts/gen-proto.sh" >&2; status=1; }
  checksums | cmp -s - proto/cua/v1/descriptor.sha256 ||
    { echo "gen-proto: proto/cua/v1/descriptor.sha256 is stale; run scripts/gen-proto.sh" >&2; status=1; }
  exit $status
fi

buf lint
buf generate
buf build -o proto/cua/v1/descriptor.binpb
checksums > proto/cua/v1/descriptor.sha256
