// Backend agent built with @a2a-js/sdk 1.x's own server classes
// (jsonRpcHandler + agentCardHandler + DefaultRequestHandler), speaking
// plain 1.0: legacyCompat is left disabled, so this server answers 0.x
// methods with -32601 and requires "A2A-Version: 1.0" on every call
// (node_modules/sdk10/dist/server/express/index.js, jsonRpcHandler:
// validateVersion with the header defaulting to 0.3).
// Card at /.well-known/agent-card.json, JSON-RPC at /.

import express from 'express';
import { DefaultRequestHandler, InMemoryTaskStore } from 'sdk10/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from 'sdk10/server/express';
import { Executor10 } from './executor10.mjs';
import { backendArgs, listen } from './serve.mjs';

const jsonrpcInterface = { url: '', protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' };
const card = {
  name: 'interop-agent-1.0',
  description: 'Scripted interop agent served by @a2a-js/sdk 1.x',
  supportedInterfaces: [jsonrpcInterface],
  provider: undefined,
  version: '1.0.0',
  capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: false },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain', 'application/json'],
  defaultOutputModes: ['text/plain', 'application/json'],
  skills: [
    {
      id: 'script',
      name: 'Scripted replies',
      description: 'Deterministic interop script',
      tags: ['interop'],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    },
  ],
  signatures: [],
};

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new Executor10());
const app = express();
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));

await listen(app, backendArgs(), (url) => {
  jsonrpcInterface.url = url;
});
