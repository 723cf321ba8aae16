// Package normalize translates A2A JSON-RPC payloads between the 0.x and 1.0
// wire dialects, byte to byte, without decoding whole documents.
//
// The canonical form is the 1.0 wire form spelled strictly (ProtoJSON,
// lowerCamelCase keys, enum names): a 1.0 peer's payload that is already
// canonical passes through as the same slice. Every object translator reads
// both dialects' spellings (be liberal in what you accept) and writes exactly
// one (be strict in what you send), so "to 1.0" and "to 0.x" are each one pass.
//
// Package normalize imports only packages dialect and internal/jsonscan (its
// JSON validator and scanner) from this module. It works on []byte and never
// touches net/http (the import policy holds it to that), metrics or logs, so
// every function here can be fuzzed and benchmarked in isolation. Agent cards
// are package agentcard's, and SSE framing package internal/sse's.
package normalize
