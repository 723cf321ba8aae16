// Client driver for @a2a-js/sdk 0.2.5 (A2AClient, 0.2.5 dialect).
// Usage: node client-025.mjs --url URL --client NAME --backend NAME --backend-dialect D

import { A2AClient } from 'sdk025/client';
import { clientArgs, codeFromMessage, FetchRecorder, Harness, RpcError } from './harness.mjs';
import { cardFrom0x, pushFrom0x, pushTo0x, rawPost, resultFrom0x, sendParams0x, streamFrom0x, taskFrom0x } from './neutral0x.mjs';
import { registerScenarios } from './scenarios.mjs';

const args = clientArgs();
const recorder = new FetchRecorder();
recorder.install();

// The 0.2.5 client resolves /.well-known/agent.json under the base URL and
// sends every call to the card's "url".
const client = new A2AClient(args.url);

// Non-streaming calls of this SDK resolve to the JSON-RPC response object,
// errors included, instead of throwing.
async function unwrap(responsePromise) {
  const response = await responsePromise;
  if ('error' in response) {
    throw new RpcError(response.error.code, response.error.message);
  }
  return response.result;
}

// acceptedOutputModes is required by the 0.2.5 MessageSendConfiguration.
const sendParams = (message, options) =>
  sendParams0x(message, options, { acceptedOutputModes: ['text/plain', 'application/json'] });

const adapter = {
  dialect: '0.2.5',
  baseUrl: args.url,
  cardProtocolPrefix: '0.',
  unknownMethod: 'tasks/doesNotExist',
  async discover() {
    const card = await client.getAgentCard();
    return cardFrom0x(card, card.url);
  },
  send: async (message, options) => resultFrom0x(await unwrap(client.sendMessage(sendParams(message, options)))),
  stream: (message) => streamFrom0x(client.sendMessageStream(sendParams(message))),
  get: async (id, historyLength) =>
    taskFrom0x(await unwrap(client.getTask(historyLength === undefined ? { id } : { id, historyLength }))),
  cancel: async (id) => taskFrom0x(await unwrap(client.cancelTask({ id }))),
  resubscribe: (id) => streamFrom0x(client.resubscribeTask({ id })),
  setPush: async (taskId, config) => pushFrom0x(await unwrap(client.setTaskPushNotificationConfig(pushTo0x(taskId, config)))),
  // The SDK's get takes TaskIdParams: the task id only.
  getPush: async (taskId) => pushFrom0x(await unwrap(client.getTaskPushNotificationConfig({ id: taskId }))),
  pushIdsFromServer: true,
  // The 0.2.5 SDK client has no list or delete method.
  listPush: undefined,
  deletePush: undefined,
  listTasks: undefined,
  codeOf: (err) => (err instanceof RpcError ? err.code : codeFromMessage(err?.message)),
  rawRpc: async (body) => rawPost((await client.getAgentCard()).url, body),
};

const harness = new Harness(args, recorder, adapter.dialect);
registerScenarios(harness, adapter, args);
process.exitCode = (await harness.run()) > 0 ? 1 : 0;
