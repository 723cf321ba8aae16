// Backend agent built with @a2a-js/sdk 0.3.x's own server classes
// (jsonRpcHandler + agentCardHandler + DefaultRequestHandler), speaking the
// 0.3 dialect. Card at /.well-known/agent-card.json, JSON-RPC at /.

import express from 'express';
import { DefaultRequestHandler, InMemoryTaskStore } from 'sdk03/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from 'sdk03/server/express';
import { card0x, Executor0x } from './executor0x.mjs';
import { backendArgs, listen } from './serve.mjs';

const card = card0x('0.3', { protocolVersion: '0.3.0', preferredTransport: 'JSONRPC' });

const taskStore = new InMemoryTaskStore();
const handler = new DefaultRequestHandler(card, taskStore, new Executor0x(taskStore));
const app = express();
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));

await listen(app, backendArgs(), (url) => {
  card.url = url;
});
