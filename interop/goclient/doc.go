// Command goclient drives the a2a-go v0.3.3 SDK client (0.3 dialect)
// through the interop scenarios against one A2A endpoint and prints one
// PASS or FAIL line per scenario, in the format interop/run.sh counts (and
// a SKIP line, which run.sh does not count, for a scenario the transport
// cannot express). -transport grpc prefers the SDK's gRPC transport
// (service a2a.v1.A2AService) through Config.PreferredTransports.
//
// It lives in its own module so that the gateway's module never depends on
// a2a-go; run.sh builds it with the versions pinned in go.sum.
//
// Usage:
//
//	goclient -url URL -client NAME -backend NAME -backend-dialect 0.2.5|0.3|1.0 [-transport jsonrpc|grpc] [-only a,b] [-tag via=direct]
package main
