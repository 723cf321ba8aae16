// Package agentcore is the dialect-neutral core of the gateway's two test
// agents, legacyagent (A2A 0.2.5) and internal/agent10 (A2A 1.0): the task
// store and its event log, the scripted behaviours keyed on a message's
// text, push config storage, the JSON-RPC 2.0 envelope and dispatch, and
// the SSE stream writer.
//
// Of the wire it holds only what 0.2.5 and 1.0 spell alike (wire.go: the
// task, status, artifact and update event bodies, generic in the message
// and part types; card.go: the card body of name, description, provider,
// version, modes and skills, and the streaming and push capabilities), and
// the JSON-RPC 2.0 envelope.
// Method names, state and role names, messages and parts, the "kind" and
// "final" 0.2.5 adds, error data and the rest of each card belong to each
// agent's wire files, which reach the core through a Dialect and a Spelling
// and render its neutral Task and Event values. Like both agents it imports nothing from this
// module, so the agents stay independent witnesses of the wire formats the
// gateway translates.
package agentcore
