// Backend agent built with @a2a-js/sdk 0.3.x's own server classes
// (jsonRpcHandler + agentCardHandler + DefaultRequestHandler), speaking the
// 0.3 dialect. Card at /.well-known/agent-card.json, JSON-RPC at /.

import express from 'express';
import { DefaultRequestHandler, InMemoryTaskStore } from 'sdk03/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from 'sdk03/server/express';
import { Executor0x } from './executor0x.mjs';
import { backendArgs, listen } from './serve.mjs';

const card = {
  name: 'interop-agent-0.3',
  description: 'Scripted interop agent served by @a2a-js/sdk 0.3',
  url: '',
  preferredTransport: 'JSONRPC',
  version: '1.0.0',
  protocolVersion: '0.3.0',
  capabilities: { streaming: true, pushNotifications: true, stateTransitionHistory: false },
  defaultInputModes: ['text/plain', 'application/json'],
  defaultOutputModes: ['text/plain', 'application/json'],
  skills: [{ id: 'script', name: 'Scripted replies', description: 'Deterministic interop script', tags: ['interop'] }],
};

const taskStore = new InMemoryTaskStore();
const handler = new DefaultRequestHandler(card, taskStore, new Executor0x(taskStore));
const app = express();
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));

await listen(app, backendArgs(), (url) => {
  card.url = url;
});
