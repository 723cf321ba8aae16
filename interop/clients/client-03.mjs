// Client driver for @a2a-js/sdk 0.3.x (ClientFactory, 0.3 dialect; JSON-RPC
// transport, or REST or gRPC with --transport rest or grpc).
// Usage: node client-03.mjs --url URL --client NAME --backend NAME --backend-dialect D

import { ClientFactory, ClientFactoryOptions, RestTransport } from 'sdk03/client';
import { clientArgs, codeFromMessage, factoryOptions, FetchRecorder, Harness, PROTOCOL_OF, restCodeOf, skipFor } from './harness.mjs';
import { cardFrom0x, pushFrom0x, pushTo0x, rawPost, resultFrom0x, sendParams0x, streamFrom0x, taskFrom0x } from './neutral0x.mjs';
import { grpcCodeOf, grpcTarget } from './grpc.mjs';
import { registerScenarios } from './scenarios.mjs';

const args = clientArgs();
const recorder = new FetchRecorder();
recorder.install();

// Resolves /.well-known/agent-card.json under the base URL and picks the
// JSON-RPC interface from url + preferredTransport (the others from
// additionalInterfaces). The gRPC factory is an export of its own
// (sdk03/client/grpc, on the optional peers @grpc/grpc-js and
// @bufbuild/protobuf), registered as an application registers it.
const grpc = args.transport === 'grpc' ? await import('sdk03/client/grpc') : undefined;
const added = grpc ? [new grpc.GrpcTransportFactory()] : [];
const client = await new ClientFactory(factoryOptions(ClientFactoryOptions, args.transport, added)).createFromUrl(args.url);

// The 0.3.x transports have no protocol name (only their factories do).
const transportBinding = () => {
  if (client.transport instanceof RestTransport) return 'HTTP+JSON';
  return grpc && client.transport instanceof grpc.GrpcTransport ? 'GRPC' : 'JSONRPC';
};
const endpoint = () => (grpc ? grpcTarget(client.transport) : client.transport.endpoint);

// The JSON-RPC transport keeps the JSON-RPC error response on the thrown
// error (errorResponse), or on its cause for errors inside an SSE stream;
// HTTP-level stream failures only carry the code in the message text.
function codeOf(err) {
  return err?.errorResponse?.error?.code ?? err?.cause?.errorResponse?.error?.code ?? codeFromMessage(err?.message);
}

const adapter = {
  dialect: '0.3',
  transport: PROTOCOL_OF[args.transport],
  baseUrl: args.url,
  cardProtocolPrefix: '0.',
  unknownMethod: 'tasks/doesNotExist',
  discover: async () => ({ ...cardFrom0x(await client.getAgentCard(), endpoint()), transportBinding: transportBinding() }),
  send: async (message, options) => resultFrom0x(await client.sendMessage(sendParams0x(message, options))),
  stream: (message) => streamFrom0x(client.sendMessageStream(sendParams0x(message))),
  get: async (id, historyLength) => taskFrom0x(await client.getTask(historyLength === undefined ? { id } : { id, historyLength })),
  cancel: async (id) => taskFrom0x(await client.cancelTask({ id })),
  resubscribe: (id) => streamFrom0x(client.resubscribeTask({ id })),
  setPush: async (taskId, config) => pushFrom0x(await client.setTaskPushNotificationConfig(pushTo0x(taskId, config))),
  getPush: async (taskId, configId) =>
    pushFrom0x(await client.getTaskPushNotificationConfig({ id: taskId, pushNotificationConfigId: configId })),
  listPush: async (taskId) => {
    const configs = await client.listTaskPushNotificationConfig({ id: taskId });
    if (!Array.isArray(configs)) throw new Error(`list result is not an array: ${JSON.stringify(configs)}`);
    return configs.map(pushFrom0x);
  },
  deletePush: (taskId, configId) => client.deleteTaskPushNotificationConfig({ id: taskId, pushNotificationConfigId: configId }),
  listTasks: undefined,
  codeOf: { jsonrpc: codeOf, rest: restCodeOf, grpc: grpcCodeOf }[args.transport],
  rawRpc: (body) => rawPost(client.transport.endpoint, body),
};

const harness = new Harness(args, recorder, adapter.dialect);
harness.skip = skipFor(args.transport, adapter.dialect);
registerScenarios(harness, adapter, args);
process.exitCode = (await harness.run()) > 0 ? 1 : 0;
