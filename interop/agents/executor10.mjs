// AgentExecutor for the 1.x JS SDK (1.0 dialect). Its events are wrapped in
// AgentEvent.{task,message,statusUpdate,artifactUpdate}, enums are the
// protobuf numbers and parts are ts-proto oneofs ({content: {$case, value}}).

import { randomUUID } from 'node:crypto';
import { AgentEvent } from 'sdk10/server';
import { plan, runPlan, CancelRegistry, ARTIFACT_NAME } from './script.mjs';

// Protobuf enum numbers of lf.a2a.v1.TaskState and Role (a2a.proto v1.0.1).
export const TaskState = {
  submitted: 1,
  working: 2,
  completed: 3,
  failed: 4,
  canceled: 5,
  'input-required': 6,
  rejected: 7,
  'auth-required': 8,
};
const ROLE_USER = 1;
const ROLE_AGENT = 2;

export function toNeutralParts(parts) {
  return (parts ?? []).map((part) => {
    const { $case, value } = part.content ?? {};
    const mimeType = part.mediaType || undefined;
    const name = part.filename || undefined;
    const meta = part.metadata === undefined ? {} : { metadata: part.metadata };
    switch ($case) {
      case 'text':
        return { text: value, ...meta };
      case 'data':
        return { data: value, ...meta };
      case 'raw':
        return { bytes: Buffer.from(value).toString('base64'), mimeType, name, ...meta };
      case 'url':
        return { uri: value, mimeType, name, ...meta };
      default:
        throw new Error(`part without content: ${JSON.stringify(part)}`);
    }
  });
}

export function fromNeutralParts(parts) {
  return parts.map((part) => {
    const common = { metadata: part.metadata, filename: part.name ?? '', mediaType: part.mimeType ?? '' };
    if (typeof part.text === 'string') {
      return { ...common, content: { $case: 'text', value: part.text } };
    }
    if ('data' in part) {
      return { ...common, content: { $case: 'data', value: part.data } };
    }
    if ('bytes' in part) {
      return { ...common, content: { $case: 'raw', value: Buffer.from(part.bytes, 'base64') } };
    }
    return { ...common, content: { $case: 'url', value: part.uri } };
  });
}

export class Executor10 {
  #cancels = new CancelRegistry();

  execute = async (requestContext, eventBus) => {
    const { userMessage, taskId, contextId, task } = requestContext;
    const isContinuation = Boolean(task) && task.status?.state === TaskState['input-required'];
    const status = (state, text) => ({
      state: TaskState[state],
      timestamp: new Date().toISOString(),
      message: text === undefined ? undefined : agentMessage(text, taskId, contextId),
    });
    await runPlan(
      plan(toNeutralParts(userMessage.parts), isContinuation),
      {
        message: (text) => eventBus.publish(AgentEvent.message(agentMessage(text, '', contextId))),
        // The 1.x handler requires a task (or message) as the first event
        // of every execution, continuations included; for those it has
        // already appended the user message to the stored history.
        task: () =>
          eventBus.publish(
            AgentEvent.task(
              task ?? {
                id: taskId,
                contextId,
                status: { state: TaskState.submitted, timestamp: new Date().toISOString(), message: undefined },
                artifacts: [],
                history: [userMessage],
                metadata: undefined,
              },
            ),
          ),
        status: (state, text) =>
          eventBus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(state, text), metadata: undefined })),
        artifact: (parts) =>
          eventBus.publish(
            AgentEvent.artifactUpdate({
              taskId,
              contextId,
              artifact: {
                artifactId: randomUUID(),
                name: ARTIFACT_NAME,
                description: '',
                parts: fromNeutralParts(parts),
                metadata: undefined,
                extensions: [],
              },
              append: false,
              lastChunk: true,
              metadata: undefined,
            }),
          ),
      },
      this.#cancels,
      taskId,
    );
  };

  cancelTask = async (taskId) => {
    this.#cancels.cancel(taskId);
  };
}

function agentMessage(text, taskId, contextId) {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: ROLE_AGENT,
    parts: fromNeutralParts([{ text }]),
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

export { ROLE_USER, ROLE_AGENT };
