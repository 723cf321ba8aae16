#!/usr/bin/env bash
# Records the CPU profile the gateway is built with (profile-guided
# optimisation): cmd/gateway/default.pgo, which `go build` uses on its own.
#
# It builds the gateway without a profile, runs the load benchmark's gateway
# cases on it (sends in every dialect pair, with and without JWT and the task
# index, at 32 connections; streams flat out and paced), records a CPU
# profile of the gateway during each measurement, and merges them. Run it
# again when the hot path has changed much: a stale profile still builds, it
# only optimises less. About a minute, and a build.
#
# Usage: scripts/pgo.sh [loadbench run flags]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -pgo=off -o "$tmp/gateway" ./cmd/gateway
go build -o "$tmp/loadbench" ./bench/cmd/loadbench
"$tmp/loadbench" run -gateway "$tmp/gateway" \
  -only '^(stream )?gateway (1\.0→1\.0|0\.3→1\.0|1\.0→0\.3|0\.3→1\.0 \+JWT \+memory index)$' \
  -conns 32 -warmup 1s -duration 8s -idle-streams 0 -stream-modes max,paced -stream-interval 100ms \
  -gateway-profiles "$tmp/profiles" "$@" >/dev/null
go tool pprof -proto "$tmp"/profiles/*.pprof > "$tmp/default.pgo"
mv "$tmp/default.pgo" cmd/gateway/default.pgo
echo "pgo: wrote cmd/gateway/default.pgo from $(ls "$tmp"/profiles | wc -l) profiles"
