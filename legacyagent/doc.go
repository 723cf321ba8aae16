// Package legacyagent is a standalone A2A 0.2.5 agent: JSON-RPC 2.0 with the
// slash-style methods (message/send, tasks/get, ...), the 0.2.5 agent card at
// /.well-known/agent.json and the authenticated extended card at
// /agent/authenticatedExtendedCard (0.2.5 has no JSON-RPC method for it).
//
// It ships with the gateway as the demonstration backend of the 0.x dialect
// and is an independent witness of that wire format in the gateway's tests:
// its wire is written with plain structs and encoding/json, and it imports
// nothing of the gateway (only internal/agentcore, the dialect-neutral task
// store, scripts and wire structs both dialects spell alike, which it shares
// with the 1.0 test agent), so a translation bug in the gateway cannot hide
// behind shared code.
//
// The agent's behaviour is keyed on the first text part of the user message
// (case-insensitive):
//
//   - text ending in "?": a direct agent Message echoing the question, no task;
//   - "fail...": submitted, working, failed (the status message says why);
//   - "input...": submitted, working, input-required ("What is your name?");
//     a follow-up message carrying that taskId moves it to working and then
//     completed with an artifact that quotes the follow-up text;
//   - "wait...": submitted, working, and working until tasks/cancel, or until
//     Options.Hold is closed, which completes it;
//   - anything else: submitted, working, an artifact named "result" holding
//     "done: <text>" followed by a copy of every non-text part of the user
//     message, then completed.
//
// Choices the 0.2.5 specification leaves open, made here on purpose:
//
//   - A message addressed to a task in a terminal state is rejected with
//     -32602 (invalid params), data {"taskId","state"}. The 0.2.5 text defines
//     no rule or code for it; this is what the Python 0.x reference server
//     answers ("Task ... is in terminal state"). A message to a task that is
//     still running (not awaiting input) is rejected the same way.
//   - Requests are validated against the 0.2.5 JSON schema's required fields,
//     including the "kind" discriminators and the user role, so a peer that
//     forgets them is caught; unknown keys are ignored, as pydantic servers do.
//   - The status update that ends a stream cycle (a terminal or an interrupted
//     state) carries final:true and the stream closes after it.
//   - Timestamps are written the way Python's datetime.isoformat writes UTC
//     times ("2025-07-31T12:00:00.123456+00:00"; no fraction when it is zero).
//   - Push notification configs are stored and served, but no webhook is ever
//     called: a demo agent that POSTs to caller-chosen URLs would be an open
//     request forwarder.
//
// An Agent is safe for concurrent use.
package legacyagent
