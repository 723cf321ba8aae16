// AgentExecutor for the 0.x JS SDKs (0.2.5 and 0.3.x). Both publish the
// same event objects (kind-discriminated Task, Message, status-update and
// artifact-update), so one executor serves both; the SDK-specific
// differences are passed in as options.

import { randomUUID } from 'node:crypto';
import { plan, runPlan, CancelRegistry, ARTIFACT_NAME } from './script.mjs';
import { waitUntil } from './serve.mjs';

// card0x is the agent card both 0.x backends serve, named after the SDK
// version that serves it; fields holds what the dialects' cards spell
// differently (protocolVersion, 0.3's preferredTransport). listen fills
// in url.
export function card0x(sdkVersion, fields) {
  return {
    name: `interop-agent-${sdkVersion}`,
    description: `Scripted interop agent served by @a2a-js/sdk ${sdkVersion}`,
    url: '',
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: true, stateTransitionHistory: false },
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [{ id: 'script', name: 'Scripted replies', description: 'Deterministic interop script', tags: ['interop'] }],
    ...fields,
  };
}

const INTERRUPTED_OR_TERMINAL = new Set(['input-required', 'completed', 'failed', 'canceled', 'rejected']);

// Part metadata rides along (neutral "metadata") so that echoes are
// faithful: a gateway marks wrapped non-object data parts with metadata
// (data_part_compat) and needs the mark back to unwrap them.
export function toNeutralParts(parts) {
  return (parts ?? []).map((part) => {
    const meta = part.metadata === undefined ? {} : { metadata: part.metadata };
    switch (part.kind) {
      case 'text':
        return { text: part.text, ...meta };
      case 'data':
        return { data: part.data, ...meta };
      case 'file':
        if ('bytes' in part.file) {
          return { bytes: part.file.bytes, mimeType: part.file.mimeType, name: part.file.name, ...meta };
        }
        return { uri: part.file.uri, mimeType: part.file.mimeType, name: part.file.name, ...meta };
      default:
        throw new Error(`unknown part kind ${JSON.stringify(part.kind)}`);
    }
  });
}

export function fromNeutralParts(parts) {
  return parts.map((part) => {
    const meta = part.metadata === undefined ? {} : { metadata: part.metadata };
    if (typeof part.text === 'string') {
      return { kind: 'text', text: part.text, ...meta };
    }
    if ('data' in part) {
      return { kind: 'data', data: part.data, ...meta };
    }
    const file = 'bytes' in part ? { bytes: part.bytes } : { uri: part.uri };
    if (part.mimeType !== undefined) file.mimeType = part.mimeType;
    if (part.name !== undefined) file.name = part.name;
    return { kind: 'file', file, ...meta };
  });
}

// Executor0x implements the SDK's AgentExecutor interface.
//
// taskStore is the handler's store. With waitForStoreOnCancel the
// executor does not return from cancelTask until the store shows the task
// canceled: the 0.2.5 DefaultRequestHandler.cancelTask reads the store
// right after awaiting the executor while its event loop persists the
// canceled event asynchronously (node_modules/sdk025/dist/server/index.js lines 543-545 then
// the store read after the if/else),
// so without this the cancel response could still say "working".
export class Executor0x {
  #cancels = new CancelRegistry();
  #taskStore;
  #waitForStoreOnCancel;

  constructor(taskStore, { waitForStoreOnCancel = false } = {}) {
    this.#taskStore = taskStore;
    this.#waitForStoreOnCancel = waitForStoreOnCancel;
  }

  execute = async (requestContext, eventBus) => {
    const { userMessage, taskId, contextId, task } = requestContext;
    const isContinuation = Boolean(task) && task.status.state === 'input-required';
    const status = (state, text) => ({
      state,
      timestamp: new Date().toISOString(),
      ...(text === undefined ? {} : { message: agentMessage(text, taskId, contextId) }),
    });
    await runPlan(
      plan(toNeutralParts(userMessage.parts), isContinuation),
      {
        message: (text) => eventBus.publish(agentMessage(text, undefined, contextId)),
        task: () => eventBus.publish(taskSnapshot(task, userMessage, taskId, contextId)),
        status: (state, text) =>
          eventBus.publish({
            kind: 'status-update',
            taskId,
            contextId,
            status: status(state, text),
            // The stream of this request ends with an interrupted or
            // terminal state; the 0.x ExecutionEventQueue stops on final.
            final: INTERRUPTED_OR_TERMINAL.has(state),
          }),
        artifact: (parts) =>
          eventBus.publish({
            kind: 'artifact-update',
            taskId,
            contextId,
            artifact: { artifactId: randomUUID(), name: ARTIFACT_NAME, parts: fromNeutralParts(parts) },
            lastChunk: true,
          }),
      },
      this.#cancels,
      taskId,
    );
    eventBus.finished();
  };

  cancelTask = async (taskId) => {
    if (!this.#cancels.cancel(taskId)) {
      return;
    }
    if (this.#waitForStoreOnCancel) {
      await waitUntil(async () => (await this.#taskStore.load(taskId))?.status.state === 'canceled');
    }
  };
}

function agentMessage(text, taskId, contextId) {
  const message = { kind: 'message', messageId: randomUUID(), role: 'agent', parts: [{ kind: 'text', text }], contextId };
  if (taskId !== undefined) message.taskId = taskId;
  return message;
}

// taskSnapshot is the first event of every execution. For a continuation
// it repeats the stored task with the new user message in its history
// (the 0.2.5 handler does not add it itself; the 0.3 one already did, and
// the messageId check keeps it from being added twice).
function taskSnapshot(task, userMessage, taskId, contextId) {
  if (task) {
    const history = [...(task.history ?? [])];
    if (!history.some((m) => m.messageId === userMessage.messageId)) {
      history.push(userMessage);
    }
    return { ...task, history };
  }
  return {
    kind: 'task',
    id: taskId,
    contextId,
    status: { state: 'submitted', timestamp: new Date().toISOString() },
    history: [userMessage],
  };
}
