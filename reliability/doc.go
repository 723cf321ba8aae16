// Package reliability is the gateway's reliability suite: the gateway binary,
// built once per run, is started against real backends and put through
// faults, load and lifecycle events (a slow reader, a soak at saturation,
// SIGTERM and config reloads under load, Redis and backends going away), and
// each test asserts what the callers received.
//
// The package holds tests only. Run it with
//
//	go test -race -v ./reliability/
//
// which ends with one line per fault ("FAULT <name>: <what the caller
// received> -> PASS|FAIL") and a closing "N passed, N failed" line. The soak
// runs for 15s there; scripts/soak.sh runs it for minutes. -short skips the
// soak and the load and flood tests.
// The Redis test needs a Redis server (internal/testredis: A2AGW_REDIS_ADDR,
// default 127.0.0.1:6379, A2AGW_SKIP_REDIS=1 to skip), reached through a
// relay the test controls.
//
// Under -race the gateway binary is built with the race detector too, and a
// race report on its stderr fails the test that ran it; set
// RELIABILITY_GATEWAY_RACE=0 or 1 to choose otherwise.
package reliability
