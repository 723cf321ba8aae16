#!/usr/bin/env bash
# Runs every fuzz target for the given time each (default 5s; try 10m).
# Crashers land in <pkg>/testdata/fuzz/<Target>/ and then run as plain tests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
t="${1:-5s}"
for pkg in ./normalize; do
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz'); do
    echo "fuzz $pkg $target for $t"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$t" "$pkg" >/dev/null
  done
done
