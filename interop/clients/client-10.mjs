// Client driver for @a2a-js/sdk 1.x (ClientFactory + JSON-RPC transport,
// plain 1.0 dialect: legacyCompat stays disabled, so the client only
// accepts a 1.0 card and sends PascalCase methods with "A2A-Version: 1.0";
// REST or gRPC with --transport rest or grpc).
// Usage: node client-10.mjs --url URL --client NAME --backend NAME --backend-dialect D

import { randomUUID } from 'node:crypto';
import { ClientFactory, ClientFactoryOptions } from 'sdk10/client';
import { assert, clientArgs, codeFromMessage, factoryOptions, FetchRecorder, Harness, PROTOCOL_OF, restCodeOf, skipFor } from './harness.mjs';
import { rawPost } from './neutral0x.mjs';
import { grpcCodeOf, grpcTarget, STATUS_10 } from './grpc.mjs';
import { registerScenarios } from './scenarios.mjs';

const args = clientArgs();
const recorder = new FetchRecorder();
recorder.install();

// The gRPC factory is an export of its own (sdk10/client/grpc, on the
// optional peers @grpc/grpc-js and @bufbuild/protobuf), registered as an
// application registers it.
const added = args.transport === 'grpc' ? [new (await import('sdk10/client/grpc')).GrpcTransportFactory()] : [];
const client = await new ClientFactory(factoryOptions(ClientFactoryOptions, args.transport, added)).createFromUrl(args.url);

// lf.a2a.v1 enum numbers (a2a.proto v1.0.1), as the SDK's ts-proto types use them.
const STATE_NAMES = ['unspecified', 'submitted', 'working', 'completed', 'failed', 'canceled', 'input-required', 'rejected', 'auth-required'];
const ROLE_USER = 1;
const ROLE_NAMES = { 1: 'user', 2: 'agent' };

function partsTo10(parts) {
  return parts.map((p) => {
    const common = { metadata: undefined, filename: p.name ?? '', mediaType: p.mimeType ?? '' };
    if (typeof p.text === 'string') return { ...common, content: { $case: 'text', value: p.text } };
    if ('data' in p) return { ...common, content: { $case: 'data', value: p.data } };
    if ('bytes' in p) return { ...common, content: { $case: 'raw', value: Buffer.from(p.bytes, 'base64') } };
    return { ...common, content: { $case: 'url', value: p.uri } };
  });
}

function partsFrom10(parts) {
  return parts.map((p) => {
    const { $case, value } = p.content ?? {};
    const file = {};
    if (p.mediaType) file.mimeType = p.mediaType;
    if (p.filename) file.name = p.filename;
    // Metadata is kept when present so that a leaked gateway mark (such
    // as data_part_compat) fails the comparisons.
    const meta = p.metadata && Object.keys(p.metadata).length > 0 ? { metadata: p.metadata } : {};
    switch ($case) {
      case 'text':
        return { text: value, ...meta };
      case 'data':
        return { data: value, ...meta };
      case 'raw':
        return { bytes: Buffer.from(value).toString('base64'), ...file, ...meta };
      case 'url':
        return { uri: value, ...file, ...meta };
      default:
        assert.fail(`1.0 part without content: ${JSON.stringify(p)}`);
    }
  });
}

function messageFrom10(m) {
  assert.ok(m && typeof m.messageId === 'string' && m.messageId, `expected a 1.0 message, got ${JSON.stringify(m)?.slice(0, 300)}`);
  assert.ok(ROLE_NAMES[m.role], `message role ${m.role}`);
  const parts = partsFrom10(m.parts);
  return {
    kind: 'message',
    messageId: m.messageId,
    role: ROLE_NAMES[m.role],
    taskId: m.taskId || undefined,
    contextId: m.contextId || undefined,
    text: parts.find((p) => typeof p.text === 'string')?.text,
    parts,
  };
}

function statusFrom10(status) {
  assert.ok(status && status.state > 0, `1.0 status without a state: ${JSON.stringify(status)}`);
  return { state: STATE_NAMES[status.state], statusText: status.message ? messageFrom10(status.message).text : undefined };
}

function artifactFrom10(a) {
  return { artifactId: a.artifactId, name: a.name, parts: partsFrom10(a.parts) };
}

function taskFrom10(t) {
  assert.ok(t && typeof t.id === 'string' && t.id && t.status, `expected a 1.0 task, got ${JSON.stringify(t)?.slice(0, 300)}`);
  return {
    kind: 'task',
    id: t.id,
    contextId: t.contextId,
    ...statusFrom10(t.status),
    artifacts: (t.artifacts ?? []).map(artifactFrom10),
    history: (t.history ?? []).map(messageFrom10),
  };
}

function streamFrom10({ payload }) {
  switch (payload?.$case) {
    case 'task':
      return taskFrom10(payload.value);
    case 'message':
      return messageFrom10(payload.value);
    case 'statusUpdate':
      return { kind: 'status-update', taskId: payload.value.taskId, contextId: payload.value.contextId, ...statusFrom10(payload.value.status) };
    case 'artifactUpdate':
      return { kind: 'artifact-update', taskId: payload.value.taskId, contextId: payload.value.contextId, artifact: artifactFrom10(payload.value.artifact) };
    default:
      assert.fail(`empty StreamResponse: ${JSON.stringify(payload)}`);
  }
}

async function* neutralStream(stream) {
  for await (const event of stream) {
    yield streamFrom10(event);
  }
}

function sendRequest({ parts, taskId, contextId }, { blocking, historyLength } = {}) {
  const configuration = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: blocking === false };
  if (historyLength !== undefined) configuration.historyLength = historyLength;
  return {
    tenant: '',
    message: {
      messageId: randomUUID(),
      contextId: contextId ?? '',
      taskId: taskId ?? '',
      role: ROLE_USER,
      parts: partsTo10(parts),
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration,
    metadata: undefined,
  };
}

const pushFrom10 = (c) => {
  assert.ok(c?.authentication, `1.0 push config without authentication: ${JSON.stringify(c)}`);
  return { taskId: c.taskId, id: c.id, url: c.url, token: c.token, scheme: c.authentication.scheme };
};

// Typed JSON-RPC errors carry envelopeCode; errors inside an SSE stream
// keep the typed error as their cause.
const codeOf = (err) => err?.envelopeCode ?? err?.cause?.envelopeCode ?? codeFromMessage(err?.message);

// @a2a-js/sdk 1.3.0's REST client turns only the A2A errors' ErrorInfo
// reasons into typed errors (fromRestErrorBody, A2A_ERROR_SPECS_BY_REASON);
// a backend's METHOD_NOT_FOUND (the 0.2.5 server's answer to a push config
// list or delete) becomes a bare A2AError. The reason is then read off the
// Status body the recorder saw, as the scenario accepts -32601 there.
const restCodeOf10 = (err) => {
  const code = restCodeOf(err);
  if (code !== undefined || err?.name !== 'A2AError') return code;
  const last = recorder.payloads.at(-1);
  const reasons = (last?.error?.details ?? []).map((d) => d?.reason);
  return reasons.includes('METHOD_NOT_FOUND') ? -32601 : undefined;
};

const endpoint = () => (args.transport === 'grpc' ? grpcTarget(client.transport) : client.transport.endpoint ?? client.transport.base?.endpoint);
const codeOfTransport = { jsonrpc: codeOf, rest: restCodeOf10, grpc: (err) => grpcCodeOf(err, STATUS_10) };

const adapter = {
  dialect: '1.0',
  transport: PROTOCOL_OF[args.transport],
  baseUrl: args.url,
  cardProtocolPrefix: '1.0',
  unknownMethod: 'DoesNotExist',
  sendsNonObjectData: true,
  async discover() {
    const card = await client.getAgentCard();
    const [first] = card.supportedInterfaces;
    assert.equal(client.protocolVersion, '1.0', 'negotiated protocol version');
    return {
      name: card.name,
      endpoint: endpoint(),
      binding: first?.protocolBinding,
      transportBinding: client.transport.protocolName,
      protocolVersion: first?.protocolVersion ?? '',
      streaming: card.capabilities?.streaming,
      pushNotifications: card.capabilities?.pushNotifications,
    };
  },
  async send(message, options) {
    const result = await client.sendMessage(sendRequest(message, options));
    return 'messageId' in result ? messageFrom10(result) : taskFrom10(result);
  },
  stream: (message) => neutralStream(client.sendMessageStream(sendRequest(message))),
  get: async (id, historyLength) => taskFrom10(await client.getTask({ tenant: '', id, historyLength })),
  cancel: async (id) => taskFrom10(await client.cancelTask({ tenant: '', id, metadata: undefined })),
  resubscribe: (id) => neutralStream(client.resubscribeTask({ tenant: '', id })),
  setPush: async (taskId, { id, url, token, scheme }) =>
    pushFrom10(
      await client.createTaskPushNotificationConfig({
        tenant: '', id, taskId, url, token, authentication: { scheme, credentials: '' },
      }),
    ),
  getPush: async (taskId, id) => pushFrom10(await client.getTaskPushNotificationConfig({ tenant: '', taskId, id })),
  listPush: async (taskId) => {
    // pageSize is a plain int32 in the SDK's types: 0 leaves it unset (the
    // JSON encoders omit it; undefined was "pageSize": null over JSON-RPC
    // and fails the gRPC encoder).
    const response = await client.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' });
    return response.configs.map(pushFrom10);
  },
  deletePush: (taskId, id) => client.deleteTaskPushNotificationConfig({ tenant: '', taskId, id }),
  listTasks: async ({ contextId, pageSize }) => {
    const response = await client.listTasks({
      tenant: '', contextId, status: 0, pageSize, pageToken: '', historyLength: undefined,
      statusTimestampAfter: undefined, includeArtifacts: undefined,
    });
    return { ...response, tasks: response.tasks.map(taskFrom10) };
  },
  codeOf: codeOfTransport[args.transport],
  rawRpc: (body) => rawPost(endpoint(), body, { 'A2A-Version': '1.0' }),
};

const harness = new Harness(args, recorder, adapter.dialect);
harness.skip = skipFor(args.transport, adapter.dialect);
registerScenarios(harness, adapter, args);
process.exitCode = (await harness.run()) > 0 ? 1 : 0;
