#!/usr/bin/env bash
# The soak: unary calls and streams in both dialects, to a 0.2.5 and a 1.0
# backend, at saturation against the gateway binary, for a few minutes.
# Every answer must be a valid success, the gateway's memory must stay flat
# after warm-up, and it prints the calls made, the p50/p99 latencies and the
# gateway's RSS (first, last and max after warm-up).
#
# Usage:
#   scripts/soak.sh [duration]     default 3m, e.g. scripts/soak.sh 10m
#
# The gateway is built without the race detector, so memory and latencies
# are those of a production build. CI runs the same test for 15s as part of
# `go test -race ./reliability/` (5s with -short).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

duration="${1:-3m}"
case "$duration" in
  -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}"; exit 0 ;;
esac

# go test's own timeout: the soak plus room for building and settling.
seconds=0
rest="$duration"
while [[ $rest =~ ^([0-9]+)(h|m|s)(.*)$ ]]; do
  n=${BASH_REMATCH[1]}
  case ${BASH_REMATCH[2]} in
    h) seconds=$((seconds + n * 3600)) ;;
    m) seconds=$((seconds + n * 60)) ;;
    s) seconds=$((seconds + n)) ;;
  esac
  rest=${BASH_REMATCH[3]}
done
if [[ -n $rest || $seconds -eq 0 ]]; then
  echo "soak: \"$duration\" is not a duration such as 3m, 90s or 1h30m" >&2
  exit 2
fi

SOAK_DURATION="$duration" RELIABILITY_GATEWAY_RACE=0 \
  go test -count=1 -v -run '^TestSoak$' -timeout "$((seconds + 300))s" ./reliability/ \
  | grep -v '^=== RUN'
