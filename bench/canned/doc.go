// Package canned is a fast A2A agent with canned replies in both dialects,
// for measuring the gateway and the proxies it is compared with.
//
// One Backend answers 0.x methods (message/send, tasks/get, message/stream)
// in 0.x and 1.0 methods (SendMessage, GetTask, SendStreamingMessage) in
// 1.0, whatever the path, so one process serves every benchmark case. Its
// cards are served under /v03/ (a 0.3 card) and /v10/ (a 1.0 card), which is
// where a gateway pointed at /v03/ or /v10/ looks for them.
//
// The replies are realistic in size and shape (a task with history, an
// artifact, a data part and a status message, about 1.7 KB) and cost the
// backend little: they are templates filled with the request id and a fresh
// task id, never parsed or re-encoded. The same Backend serves over HTTP
// (ServeHTTP, for the load benchmark) and in memory (RoundTrip, for
// benchmarks of the proxy's handler without a network).
//
// Stream requests choose their own shape in params.metadata.bench: events
// (how many, default 50), intervalUs (pause between events, default none),
// startUs (Unix microseconds at which the first event is due, default on arrival)
// and hold (send the first event, then keep the stream open until the
// caller leaves, to measure idle streams). Every event carries the time it
// was written, in nanoseconds since the Unix epoch, at metadata.ts, so a
// client can tell how long the event took to reach it.
package canned
