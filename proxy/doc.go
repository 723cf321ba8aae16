// Package proxy is the gateway's HTTP side: one http.Handler per published
// agent that reads a JSON-RPC call in either A2A dialect, forwards it to the
// backend agent in the backend's dialect, and answers, stream event by
// stream event, in the caller's dialect.
//
// Package proxy imports normalize, dialect, auth and store from this module.
// It holds no translation logic of its own: it decides, normalize rewrites.
package proxy
