// Backend agent built with @a2a-js/sdk 0.2.5's own server classes
// (A2AExpressApp + DefaultRequestHandler), speaking the 0.2.5 dialect.
// Card at /.well-known/agent.json, JSON-RPC at /.

import express from 'express';
import { A2AExpressApp, DefaultRequestHandler, InMemoryTaskStore } from 'sdk025/server';
import { card0x, Executor0x } from './executor0x.mjs';
import { backendArgs, listen } from './serve.mjs';

const card = card0x('0.2.5', { protocolVersion: '0.2.5' });

const taskStore = new InMemoryTaskStore();
const executor = new Executor0x(taskStore, { waitForStoreOnCancel: true });
const handler = new DefaultRequestHandler(card, taskStore, executor);
const app = new A2AExpressApp(handler).setupRoutes(express(), '');

await listen(app, backendArgs(), (url) => {
  card.url = url;
});
