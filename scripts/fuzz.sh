#!/usr/bin/env bash
# Runs every fuzz target for the given budget each: a number of executions
# (default 50000x) or a time (try 10m). Crashers land in
# <pkg>/testdata/fuzz/<Target>/ and then run as plain tests. CI uses a count:
# with a time, Go 1.26's fuzzing coordinator can fail a target with a bare
# "context deadline exceeded" when the time runs out on a loaded machine
# (golang/go#75804, fixed in Go 1.27), which a count never does.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
t="${1:-50000x}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Every package's targets, found rather than listed: a list had left out
# auth's and both bindings' for several sessions.
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "fuzz $pkg $target for $t"
    if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$t" "$pkg" >"$log" 2>&1; then
      cat "$log"
      exit 1
    fi
  done
done
