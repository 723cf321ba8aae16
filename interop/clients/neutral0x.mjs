// Conversions between the 0.x SDK objects (kind-discriminated JSON, the
// same for 0.2.5 and 0.3) and the neutral objects of scenarios.mjs. Every
// converter insists on the 0.x discriminators so that a 1.0-shaped object
// leaking through a gateway is reported instead of tolerated.

import { randomUUID } from 'node:crypto';
import { assert } from './harness.mjs';

export function partsTo0x(parts) {
  return parts.map((p) => {
    if (typeof p.text === 'string') return { kind: 'text', text: p.text };
    if ('data' in p) return { kind: 'data', data: p.data };
    const file = 'bytes' in p ? { bytes: p.bytes } : { uri: p.uri };
    if (p.mimeType !== undefined) file.mimeType = p.mimeType;
    if (p.name !== undefined) file.name = p.name;
    return { kind: 'file', file };
  });
}

export function partsFrom0x(parts) {
  assert.ok(Array.isArray(parts), `parts is not an array: ${JSON.stringify(parts)}`);
  return parts.map((p) => {
    // Metadata is kept when present so that a leaked gateway mark fails
    // the comparisons.
    const meta = p.metadata && Object.keys(p.metadata).length > 0 ? { metadata: p.metadata } : {};
    switch (p.kind) {
      case 'text':
        return { text: p.text, ...meta };
      case 'data':
        return { data: p.data, ...meta };
      case 'file': {
        const out = 'bytes' in p.file ? { bytes: p.file.bytes } : { uri: p.file.uri };
        if (p.file.mimeType !== undefined) out.mimeType = p.file.mimeType;
        if (p.file.name !== undefined) out.name = p.file.name;
        return { ...out, ...meta };
      }
      default:
        assert.fail(`0.x part without a known kind: ${JSON.stringify(p)}`);
    }
  });
}

export function userMessage0x({ parts, taskId, contextId }) {
  const message = { kind: 'message', messageId: randomUUID(), role: 'user', parts: partsTo0x(parts) };
  if (taskId !== undefined) message.taskId = taskId;
  if (contextId !== undefined) message.contextId = contextId;
  return message;
}

function firstText(parts) {
  return parts.find((p) => typeof p.text === 'string')?.text;
}

export function messageFrom0x(m) {
  assert.equal(m?.kind, 'message', `expected a 0.x message, got ${JSON.stringify(m)?.slice(0, 300)}`);
  const parts = partsFrom0x(m.parts);
  return { kind: 'message', messageId: m.messageId, role: m.role, taskId: m.taskId, contextId: m.contextId, text: firstText(parts), parts };
}

function statusFrom0x(status) {
  assert.ok(status && typeof status.state === 'string', `0.x status without a state: ${JSON.stringify(status)}`);
  return { state: status.state, statusText: status.message ? messageFrom0x(status.message).text : undefined };
}

function artifactFrom0x(a) {
  return { artifactId: a.artifactId, name: a.name, parts: partsFrom0x(a.parts) };
}

export function taskFrom0x(t) {
  assert.equal(t?.kind, 'task', `expected a 0.x task, got ${JSON.stringify(t)?.slice(0, 300)}`);
  return {
    kind: 'task',
    id: t.id,
    contextId: t.contextId,
    ...statusFrom0x(t.status),
    artifacts: (t.artifacts ?? []).map(artifactFrom0x),
    history: (t.history ?? []).map(messageFrom0x),
  };
}

// resultFrom0x converts a message/send result or a stream event.
export function resultFrom0x(r) {
  switch (r?.kind) {
    case 'task':
      return taskFrom0x(r);
    case 'message':
      return messageFrom0x(r);
    case 'status-update':
      return { kind: 'status-update', taskId: r.taskId, contextId: r.contextId, ...statusFrom0x(r.status), final: r.final };
    case 'artifact-update':
      return { kind: 'artifact-update', taskId: r.taskId, contextId: r.contextId, artifact: artifactFrom0x(r.artifact) };
    default:
      assert.fail(`0.x result without a known kind: ${JSON.stringify(r)?.slice(0, 300)}`);
  }
}

// streamFrom0x converts each event of an SDK stream.
export async function* streamFrom0x(stream) {
  for await (const event of stream) {
    yield resultFrom0x(event);
  }
}

// sendParams0x is the MessageSendParams of a neutral message; configuration
// holds what the SDK asks for beyond blocking and historyLength.
export function sendParams0x(message, { blocking, historyLength } = {}, configuration = {}) {
  configuration = { ...configuration };
  if (blocking !== undefined) configuration.blocking = blocking;
  if (historyLength !== undefined) configuration.historyLength = historyLength;
  return { message: userMessage0x(message), configuration };
}

// cardFrom0x is the neutral view of a 0.x agent card whose JSON-RPC calls
// go to endpoint.
export function cardFrom0x(card, endpoint) {
  return {
    name: card.name,
    endpoint,
    binding: card.preferredTransport ?? 'JSONRPC',
    protocolVersion: card.protocolVersion ?? '',
    streaming: card.capabilities?.streaming,
    pushNotifications: card.capabilities?.pushNotifications,
  };
}

export function pushTo0x(taskId, { id, url, token, scheme }) {
  return { taskId, pushNotificationConfig: { id, url, token, authentication: { schemes: [scheme] } } };
}

export function pushFrom0x(c) {
  const p = c?.pushNotificationConfig;
  assert.ok(p, `expected a 0.x TaskPushNotificationConfig, got ${JSON.stringify(c)}`);
  assert.ok(Array.isArray(p.authentication?.schemes), `authentication.schemes: ${JSON.stringify(p.authentication)}`);
  assert.equal(p.authentication.schemes.length, 1, 'one auth scheme');
  return { taskId: c.taskId, id: p.id, url: p.url, token: p.token, scheme: p.authentication.schemes[0] };
}

// rawPost sends body verbatim to a JSON-RPC endpoint, for the requests no
// SDK can produce (unknown method, malformed JSON).
export async function rawPost(endpoint, body, headers = {}) {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...headers },
    body,
  });
  const textBody = await response.text();
  let json;
  try {
    json = JSON.parse(textBody);
  } catch {
    assert.fail(`HTTP ${response.status} with a non-JSON body: ${textBody.slice(0, 200)}`);
  }
  return { status: response.status, json };
}
