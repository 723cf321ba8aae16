// Self-test of the wire shape checks (node --test clients/): each check
// must reject the leak it exists for and accept the clean shape.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPayloads } from './wirecheck.mjs';

const rpc = (result) => ({ jsonrpc: '2.0', id: 1, result });
const task10 = { id: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING', timestamp: '2025-01-01T00:00:00.000Z' } };
const task0x = { kind: 'task', id: 't', contextId: 'c', status: { state: 'working' } };

test('1.0 accepts ProtoJSON shapes', () => {
  checkPayloads('1.0', [
    rpc({ task: task10 }),
    rpc(task10),
    rpc({ statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } } }),
    rpc({ message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'x' }, { data: [1] }, { raw: 'aGk=', mediaType: 'text/plain' }] } }),
    rpc({ tasks: [task10], nextPageToken: '', pageSize: 50, totalSize: 1 }),
    rpc({ configs: [{ taskId: 't', id: 'c', url: 'u', authentication: { scheme: 'Bearer' } }] }),
    { jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'x', data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo' }] } },
  ]);
});

test('1.0 rejects 0.x leaks', () => {
  const leaks = [
    rpc({ task: { ...task10, kind: 'task' } }),
    rpc({ task: { ...task10, status: { state: 'working' } } }),
    rpc({ statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' }, final: true } }),
    rpc({ message: { messageId: 'm', role: 'agent', parts: [] } }),
    rpc({ message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ kind: 'text', text: 'x' }] } }),
    rpc({ message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'x', data: {} }] } }),
    rpc({ task: { ...task10, status: { state: 'TASK_STATE_WORKING', timestamp: '2025-01-01T00:00:00+02:00' } } }),
    rpc({ tasks: [], nextPageToken: '' }),
    { jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'x', data: { taskId: 't' } } },
  ];
  for (const leak of leaks) {
    assert.throws(() => checkPayloads('1.0', [leak]), /wire shape/, JSON.stringify(leak));
  }
});

test('0.x accepts schema shapes', () => {
  checkPayloads('0.3', [
    rpc(task0x),
    rpc({ kind: 'status-update', taskId: 't', contextId: 'c', status: { state: 'completed' }, final: true }),
    rpc({ kind: 'message', messageId: 'm', role: 'agent', parts: [{ kind: 'file', file: { uri: 'u', mimeType: 'x/y' } }] }),
    rpc([{ taskId: 't', pushNotificationConfig: { id: 'c', url: 'u', authentication: { schemes: ['Bearer'] } } }]),
    rpc(null),
  ]);
});

test('0.x rejects 1.0 leaks', () => {
  const leaks = [
    rpc({ task: task0x }),
    rpc({ ...task0x, status: { state: 'TASK_STATE_WORKING' } }),
    rpc({ kind: 'status-update', taskId: 't', contextId: 'c', status: { state: 'completed' } }),
    rpc({ kind: 'message', messageId: 'm', role: 'ROLE_AGENT', parts: [] }),
    rpc({ kind: 'message', messageId: 'm', role: 'agent', parts: [{ text: 'x' }] }),
    rpc({ kind: 'message', messageId: 'm', role: 'agent', parts: [{ kind: 'data', data: [1] }] }),
    rpc({ kind: 'message', messageId: 'm', role: 'agent', parts: [{ kind: 'file', file: { bytes: 'aGk=', mediaType: 'x/y' } }] }),
    rpc({ taskId: 't', id: 'c', url: 'u' }),
    { jsonrpc: '2.0', id: 1 },
  ];
  for (const leak of leaks) {
    assert.throws(() => checkPayloads('0.3', [leak]), /wire shape/, JSON.stringify(leak));
  }
});
