// Package rest serves the A2A 1.0 HTTP+JSON (REST) binding in front of the
// gateway's JSON-RPC core.
//
// It is a thin front end: each REST request becomes the canonical 1.0
// JSON-RPC request of the same operation (the REST body is the ProtoJSON of
// the request message, which is what the 1.0 JSON-RPC params are; path and
// query fields are set into it), the core serves that like any JSON-RPC call
// (auth, ownership, translation to the backend's dialect, metrics), and its
// answer is turned back into the REST wire shape: the bare result, a
// google.rpc.Status error (AIP-193, as the 1.0 spec §11.6 and the a2a-go SDK
// use it) with the HTTP status of the spec's mapping, or an event stream whose
// data is the bare StreamResponse.
//
// The 0.3 binding's /v1 routes are served the same way, their bodies
// translated between the 0.3 proto's ProtoJSON and the canonical form
// (v03.go).
package rest
