#!/usr/bin/env bash
# The gateway's load benchmark: the gateway measured side by side with plain
# pass-through proxies (Go's httputil.ReverseProxy and nginx) in one run on
# this machine, against the same canned A2A backend. See bench/README.md.
#
# Usage:
#   scripts/bench.sh                 full run (about 22 minutes on an idle
#                                    machine; before each measurement it waits
#                                    up to 3 minutes for other load to pass, and
#                                    measures again what others disturbed):
#                                    every case in 3 rounds of 5 s at 1, 32 and
#                                    256 connections (each row: the round with
#                                    the most req/s), 1,000 streams of 50 events
#                                    (3 rounds too: the lowest p99, the most
#                                    events/s), 5,000 idle streams; writes
#                                    bench/results/latest.{md,json}
#   scripts/bench.sh --smoke         every case for about a second, to prove the
#                                    benchmark works (what CI runs, ~30 s);
#                                    writes nothing into the repository
#   scripts/bench.sh --bindings      only the bindings' cost per call: one 1.0
#                                    GetTask over JSON-RPC, gRPC (h2c on the
#                                    traffic listener, and grpc-go's own
#                                    transport as grpc_listen serves it) and
#                                    REST, sends and gets over JSON-RPC and
#                                    REST, side by side in one process (Go
#                                    benchmarks, CPU ns per call and the ratio
#                                    to JSON-RPC); the full run and --smoke
#                                    end with it too
#   scripts/bench.sh [--smoke] [loadbench flags]
#                                    e.g. -only 'nginx|gateway 1.0' -conns 32
#                                    -duration 5s -pin off; see
#                                    `go run ./bench/cmd/loadbench run -h`
#
# The full run installs nginx (nginx-light) and Redis from Debian's packages
# when they are missing; --smoke installs nothing unless --install is given,
# and skips the cases whose server is missing. Set LOADBENCH_NO_INSTALL=1 to
# never install. The machine should be otherwise idle: the table reports how
# much CPU everything else used during each measurement ("other").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

smoke=0
bindings=0
install=1
args=()
for a in "$@"; do
  case "$a" in
    --smoke) smoke=1; install=0 ;;
    --bindings) bindings=1; install=0 ;;
    --install) install=2 ;;
    -h|--help) sed -n '2,38p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) args+=("$a") ;;
  esac
done
if [[ "${LOADBENCH_NO_INSTALL:-}" == 1 ]]; then install=0; fi

if [[ $install != 0 ]] && ! command -v nginx >/dev/null && [[ ! -x /usr/sbin/nginx ]]; then
  echo "bench: installing nginx-light"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null
fi
if [[ $install != 0 ]]; then
  scripts/ensure-redis.sh
fi

# bindings_cost runs the Go benchmarks that serve one operation over each
# binding through the same gateway and canned backend, and prints each
# one's CPU per call beside JSON-RPC's (issue 25's target: <= 1.2x). The
# GRPCFloor rows are the transports alone, replaying the gateway's answer,
# beside the whole JSON-RPC call of GRPCUnary: what no gateway work can cut.
bindings_cost() {
  local n=2000
  [[ $smoke == 1 ]] && n=200
  echo "bench: the bindings' cost per call (CPU ns per call, ratio to JSON-RPC of the same operation)"
  go test -run '^$' -bench '^(BenchmarkGRPCUnary|BenchmarkGRPCFloor|BenchmarkRESTvsJSONRPC)$' -benchtime "${n}x" -benchmem ./proxy |
    awk '/cpu-ns\/op/ {
        name = $1; sub(/-[0-9]+$/, "", name)
        for (i = 2; i < NF; i++) if ($(i+1) == "cpu-ns/op") cpu = $i
        for (i = 2; i < NF; i++) if ($(i+1) == "allocs/op") allocs = $i
        group = name; sub(/\/[^\/]+$/, "", group); binding = name; sub(/.*\//, "", binding)
        of = group; if (group == "BenchmarkGRPCFloor") of = "BenchmarkGRPCUnary"
        if (binding == "jsonrpc" && of == group) base[group] = cpu
        ratio = (of in base && base[of] > 0) ? sprintf("%.2fx", cpu / base[of]) : "-"
        printf "%-58s %10.0f cpu-ns/call %6d allocs/call %8s of JSON-RPC\n", name, cpu, allocs, ratio
      }
      /^(FAIL|panic|---)/ { print; failed = 1 }
      END { exit failed }'
}

if [[ $bindings == 1 ]]; then
  bindings_cost
  exit
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/loadbench" ./bench/cmd/loadbench
go build -o "$tmp/gateway" ./cmd/gateway

if [[ $smoke == 1 ]]; then
  "$tmp/loadbench" run -smoke -gateway "$tmp/gateway" -out "$tmp/results" "${args[@]}"
else
  "$tmp/loadbench" run -gateway "$tmp/gateway" -rounds 3 -duration 5s -quiet-wait 3m -retries 2 -out bench/results "${args[@]}"
fi
bindings_cost
