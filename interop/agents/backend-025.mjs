// Backend agent built with @a2a-js/sdk 0.2.5's own server classes
// (A2AExpressApp + DefaultRequestHandler), speaking the 0.2.5 dialect.
// Card at /.well-known/agent.json, JSON-RPC at /.

import express from 'express';
import { A2AExpressApp, DefaultRequestHandler, InMemoryTaskStore } from 'sdk025/server';
import { Executor0x } from './executor0x.mjs';
import { backendArgs, listen } from './serve.mjs';

const card = {
  name: 'interop-agent-0.2.5',
  description: 'Scripted interop agent served by @a2a-js/sdk 0.2.5',
  url: '',
  version: '1.0.0',
  protocolVersion: '0.2.5',
  capabilities: { streaming: true, pushNotifications: true, stateTransitionHistory: false },
  defaultInputModes: ['text/plain', 'application/json'],
  defaultOutputModes: ['text/plain', 'application/json'],
  skills: [{ id: 'script', name: 'Scripted replies', description: 'Deterministic interop script', tags: ['interop'] }],
};

const taskStore = new InMemoryTaskStore();
const executor = new Executor0x(taskStore, { waitForStoreOnCancel: true });
const handler = new DefaultRequestHandler(card, taskStore, executor);
const app = new A2AExpressApp(handler).setupRoutes(express(), '');

await listen(app, backendArgs(), (url) => {
  card.url = url;
});
