// The scripted behaviour shared by every backend agent, independent of the
// SDK and dialect that serves it. A backend turns the incoming message into
// neutral parts, asks plan() what to do, and replays the steps with its own
// SDK's event types. Keeping the script in one place is what lets the
// clients assert identical outcomes against every backend.
//
// Neutral part shapes:
//   {text}            {data}
//   {bytes, mimeType, name}   {uri, mimeType, name}
//
// Keyed on the first text part of the user message:
//   ends with "?"        -> direct Message answer "answer: <text>"
//   starts with "fail"   -> task fails with status message "failed: <text>"
//   starts with "input"  -> task stops in input-required ("need more input");
//                           the next message on that task completes it
//   starts with "wait"   -> task stays working until it is canceled
//   starts with "slow"   -> like the default, but the agent takes SLOW_MS
//                           before producing its artifact, so that a
//                           non-blocking send observes a running task
//   anything else        -> working -> artifact -> completed; the artifact
//                           is "done: <text>" followed by echoes of every
//                           file and data part of the message.

export const SLOW_MS = 400;

export const texts = {
  answer: (text) => `answer: ${text}`,
  working: (text) => `working on: ${text}`,
  done: (text) => `done: ${text}`,
  failed: (text) => `failed: ${text}`,
  inputNeeded: 'need more input',
  canceled: 'canceled by request',
};

export const ARTIFACT_NAME = 'result';

export function firstText(parts) {
  const part = parts.find((p) => typeof p.text === 'string');
  return part ? part.text : '';
}

// plan returns the ordered steps of one execution. isContinuation is true
// when the message continues a task that was waiting for input.
export function plan(parts, isContinuation) {
  const text = firstText(parts);
  const echoes = parts.filter((p) => typeof p.text !== 'string');
  const complete = (delayMs) => [
    { type: 'status', state: 'working', text: texts.working(text) },
    ...(delayMs ? [{ type: 'delay', ms: delayMs }] : []),
    { type: 'artifact', parts: [{ text: texts.done(text) }, ...echoes] },
    { type: 'status', state: 'completed' },
  ];
  if (isContinuation) {
    return [{ type: 'task' }, ...complete(0)];
  }
  if (text.endsWith('?')) {
    return [{ type: 'message', text: texts.answer(text) }];
  }
  if (text.startsWith('fail')) {
    return [{ type: 'task' }, { type: 'status', state: 'failed', text: texts.failed(text) }];
  }
  if (text.startsWith('input')) {
    return [{ type: 'task' }, { type: 'status', state: 'input-required', text: texts.inputNeeded }];
  }
  if (text.startsWith('wait')) {
    return [
      { type: 'task' },
      { type: 'status', state: 'working', text: texts.working(text) },
      { type: 'waitForCancel' },
    ];
  }
  if (text.startsWith('slow')) {
    return [{ type: 'task' }, ...complete(SLOW_MS)];
  }
  return [{ type: 'task' }, ...complete(0)];
}

// CancelRegistry lets cancelTask wake the execution that is parked in a
// waitForCancel step.
export class CancelRegistry {
  #waiters = new Map();

  wait(taskId) {
    return new Promise((resolve) => this.#waiters.set(taskId, resolve));
  }

  // cancel reports whether an execution was waiting for taskId.
  cancel(taskId) {
    const resolve = this.#waiters.get(taskId);
    if (!resolve) {
      return false;
    }
    this.#waiters.delete(taskId);
    resolve();
    return true;
  }
}

export const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// runPlan carries out steps, publishing each event in the dialect's
// spelling: events.message(text), events.task(), events.status(state, text)
// and events.artifact(parts). A waitForCancel step parks until cancels
// wakes taskId, then publishes the canceled status.
export async function runPlan(steps, events, cancels, taskId) {
  for (const step of steps) {
    switch (step.type) {
      case 'message':
        events.message(step.text);
        break;
      case 'task':
        events.task();
        break;
      case 'status':
        events.status(step.state, step.text);
        break;
      case 'artifact':
        events.artifact(step.parts);
        break;
      case 'delay':
        await delay(step.ms);
        break;
      case 'waitForCancel':
        await cancels.wait(taskId);
        events.status('canceled', texts.canceled);
        break;
      default:
        throw new Error(`unknown step ${step.type}`);
    }
  }
}
