// Package agent10 is a standalone A2A 1.0 agent, the test peer of the
// gateway's 1.0 dialect: JSON-RPC 2.0 with the PascalCase methods of
// a2a.proto (v1.0.1) serialised as ProtoJSON, and the card at
// /.well-known/agent-card.json.
//
// It is an independent witness of the 1.0 wire format: its wire is written
// with plain structs and encoding/json, and it imports nothing of the
// gateway (only internal/agentcore, the dialect-neutral task store, scripts
// and wire structs both dialects spell alike, which it shares with
// legacyagent), so a translation bug in the gateway cannot hide behind
// shared code. Like the
// Python 1.0 server it is strict where a gateway is most likely to slip:
//
//   - every JSON-RPC call needs the A2A-Version service parameter (header or
//     query) with major version 1; absent means 0.3, answered with -32009;
//   - params may hold no key the proto message lacks, at any depth: a leaked
//     0.x key (kind, final, blocking, mimeType, pushNotificationConfig, ...)
//     is -32602. Keys must be lowerCamelCase; proto names (context_id) are
//     refused although ProtoJSON parsers take them. Enums must be names and
//     int32 fields numbers; the integer and string forms ProtoJSON also
//     allows are refused.
//
// The behaviour table is that of the 0.2.5 demo agent (package legacyagent),
// keyed on the first text part of the user message, case-insensitive:
//
//   - text ending in "?": {"message":..}, an agent reply echoing the question;
//   - "fail...": submitted, working, failed (the status message says why);
//   - "input...": submitted, working, input-required ("What is your name?");
//     a follow-up message with that taskId goes working, then completed with
//     an artifact quoting the follow-up text;
//   - "wait...": submitted, working until CancelTask, or until Options.Hold
//     is closed, which completes it;
//   - anything else: submitted, working, an artifact named "result" holding
//     "done: <text>" and a copy of every non-text part, then completed.
//
// Streams carry one-key StreamResponse wrappers (task, message,
// statusUpdate, artifactUpdate), the task snapshot first; there is no
// "final": a stream closes after a terminal or interrupted state. A message
// to a task that is terminal, or still running, is an
// UnsupportedOperationError (-32004), as the 1.0 specification asks for the
// terminal case. Timestamps are RFC 3339 UTC with milliseconds and "Z".
// Push notification configs are stored and served, but no webhook is ever
// called.
//
// An Agent is safe for concurrent use.
package agent10
