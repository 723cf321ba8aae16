#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, vet, tidy modules, the
# Windows and macOS builds, the unit and end-to-end tests under the race
# detector (Redis included), the allocation budgets, a fuzzing and
# benchmark smoke run, and the interop suite with the official A2A SDKs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n== %s\n' "$*"; }

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './interop/node_modules/*'))
if [[ -n "$unformatted" ]]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

step "go vet"
go vet ./...
(cd interop/goclient && go vet ./...)
(cd interop/go10 && go vet ./...)
(cd interop/harness && go vet ./...)

step "go mod tidy -diff: go.mod and go.sum say what the code imports"
go mod tidy -diff
(cd interop/goclient && go mod tidy -diff)
(cd interop/go10 && go mod tidy -diff)
(cd interop/harness && go mod tidy -diff)

step "builds for Windows and macOS"
GOOS=windows go build ./...
GOOS=darwin go build ./...

step "redis, promtool, helm"
scripts/ensure-redis.sh
scripts/ensure-promtool.sh
scripts/ensure-helm.sh
export PATH="$(go env GOPATH)/bin:$PATH"

step "go test -race"
go test -race -count=1 ./...
# The interop modules' own tests: the harness's runner and mappers, each SDK adapter's mapping.
(cd interop/harness && go test -race -count=1 ./...)
(cd interop/goclient && go test -race -count=1 ./...)
(cd interop/go10 && go test -race -count=1 ./...)

step "allocation budgets, which the race detector's own allocations hide"
go test -count=1 -run 'Budget|AllocsPerRequest' ./normalize/ ./proxy/

step "fuzz smoke (each target a few seconds; longer: see README)"
scripts/fuzz.sh "${FUZZ_TIME:-50000x}"

step "benchmark smoke: microbenchmarks, then the load benchmark for about a second a case"
go test -run '^$' -bench . -skip 'CallStack|RetainedPerSend|MemoryFootprint|IdleStreamMemory' -benchtime 100x ./normalize/ ./proxy/ ./store/ >/dev/null
# The footprint benchmarks fill a whole index, or open a thousand streams, an
# iteration: one each, their figures printed (the idle streams 100 a case here).
go test -run '^$' -bench 'RetainedPerSend|MemoryFootprint' -benchtime 1x ./proxy/ ./store/ | grep -E 'B/(send|task)'
A2AGW_IDLE_STREAMS=100 go test -run '^$' -bench IdleStreamMemory -benchtime 1x ./proxy/ | grep -E 'KiB-heap'
scripts/bench.sh --smoke

step "stack per connection after a call (figures to watch, not budgets)"
go test -run '^$' -bench CallStack -benchtime 1x ./proxy/ | grep stack-B/conn
go test -count=1 -run '^TestConnectionStack$' -v ./cmd/gateway/ | grep 'byte stack'

step "interop: official A2A SDKs through the gateway binary"
interop/run.sh
