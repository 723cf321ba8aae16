// Package proxy is the gateway's HTTP side: one http.Handler per published
// agent that reads a JSON-RPC call in either A2A dialect, forwards it to the
// backend agent in the backend's dialect, and answers, stream event by
// stream event, in the caller's dialect.
//
// Package proxy imports normalize, agentcard, internal/sse, dialect, auth and
// store from this module. It holds no translation logic and writes no A2A
// JSON of its own: it decides, normalize (and agentcard, for cards) writes.
// What it emulates for a backend whose dialect lacks something is listed in
// emulate.go.
package proxy
