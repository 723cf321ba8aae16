// Push scenarios (issue 24): a caller of one dialect registers a webhook on
// a receiver of its own (127.0.0.1, port 0), runs a task through several
// states, and asserts every delivery the receiver gets: the caller's
// dialect, the caller's token in the header(s) its dialect's receivers
// read, Content-Type application/json, states in order ending in the final
// one; and that config read-back shows the caller's URL and token only.
// The deliveries come from the backends' official senders (@a2a-js/sdk
// 0.3.14's and 1.3.0's DefaultPushNotificationSender, a2a-go v2.3.1's
// push.HTTPPushSender), relayed and translated by the gateway.
//
// The calls are plain JSON-RPC in the caller's dialect (what is under test
// here is the delivery, not a client SDK; the SDK clients' push config
// calls are covered by the push-config scenario of the main drivers).
//
// Usage: node push.mjs --url URL --client NAME --caller-dialect 0.3|1.0
//        --backend NAME --backend-dialect D [--only a,b] [--tag t]

import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import assert from 'node:assert/strict';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    client: { type: 'string' },
    'caller-dialect': { type: 'string' },
    backend: { type: 'string' },
    'backend-dialect': { type: 'string' },
    only: { type: 'string', default: '' },
    tag: { type: 'string', default: '' },
    'timeout-ms': { type: 'string', default: '15000' },
    direct: { type: 'boolean', default: false },
  },
});
for (const required of ['url', 'client', 'caller-dialect', 'backend', 'backend-dialect']) {
  if (!args[required]) throw new Error(`missing --${required}`);
}
const caller = args['caller-dialect'] === '1.0' ? '1.0' : '0.x';
const timeoutMs = Number(args['timeout-ms']);
const only = new Set(args.only.split(',').filter(Boolean));

// Through the gateway every delivery carries what the caller's dialect
// expects (push/headers.go): application/json, and toward 1.0 the token in
// both spellings. Direct (--direct, caller and backend of one dialect) the
// receiver sees the native sender's own headers: @a2a-js/sdk 1.3.0 sends
// application/a2a+json and X-A2A-Notification-Token, a2a-go v2.3.1
// application/json and A2A-Notification-Token.
const direct = args.direct;
const CONTENT_TYPE = direct ? /^application\/(a2a\+)?json\b/ : /^application\/json\b/;

// --- receiver ----------------------------------------------------------------

// Receiver records every POST to /hook/{name} with its headers and parsed
// body, and lets a scenario wait until a condition over them holds.
class Receiver {
  deliveries = new Map();
  #waiters = new Set();

  async start() {
    this.server = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const name = req.url.replace(/^\/hook\//, '');
        const raw = Buffer.concat(chunks).toString('utf8');
        let body;
        try {
          body = JSON.parse(raw);
        } catch {
          body = { unparsable: raw.slice(0, 300) };
        }
        if (!this.deliveries.has(name)) this.deliveries.set(name, []);
        this.deliveries.get(name).push({ method: req.method, headers: req.headers, body });
        if (process.env.PUSH_DEBUG) console.error(`delivery ${name}: ${JSON.stringify(req.headers)} ${raw}`);
        res.writeHead(200).end();
        for (const w of this.#waiters) w();
      });
    });
    await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${this.server.address().port}/hook/`;
  }

  of(name) {
    return this.deliveries.get(name) ?? [];
  }

  // until resolves once accept(deliveries of name) holds, or fails at the deadline.
  until(name, accept, what) {
    return new Promise((resolve, reject) => {
      // accept throwing (a delivery of the wrong shape) ends the wait at once.
      const check = () => {
        let done;
        try {
          done = accept(this.of(name));
        } catch (err) {
          clearTimeout(timer);
          this.#waiters.delete(check);
          reject(err);
          return;
        }
        if (done) {
          clearTimeout(timer);
          this.#waiters.delete(check);
          resolve(this.of(name));
        }
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`${what} not received within ${timeoutMs}ms; got ${JSON.stringify(this.of(name).map((d) => d.body)).slice(0, 600)}`));
      }, timeoutMs);
      this.#waiters.add(check);
      check();
    });
  }

  stop() {
    this.server.closeAllConnections?.();
    this.server.close();
  }
}

// --- the caller's dialect ------------------------------------------------------

let rpcId = 0;
async function rpc(method, params) {
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
  if (caller === '1.0') headers['A2A-Version'] = '1.0';
  const response = await fetch(args.url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
  });
  const text = await response.text();
  let reply;
  try {
    reply = JSON.parse(text);
  } catch {
    assert.fail(`${method}: HTTP ${response.status} with a non-JSON body: ${text.slice(0, 200)}`);
  }
  assert.ok(!reply.error, `${method}: JSON-RPC error ${JSON.stringify(reply.error)}`);
  return reply.result;
}

const FINAL = new Set(['completed', 'failed', 'canceled', 'rejected']);
const RANK = { submitted: 0, working: 1, 'input-required': 1, completed: 2, failed: 2, canceled: 2, rejected: 2 };
const STATE_10 = /^TASK_STATE_[A-Z_]+$/;
const from10State = (s) => s.replace(/^TASK_STATE_/, '').toLowerCase().replace('_', '-');

// The dialect's calls, each answering the neutral {id, contextId, state}
// or config {id, url, token}.
const api = {
  '0.x': {
    send: async (text, { taskId, contextId, push } = {}) => {
      const message = { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }], taskId, contextId };
      const configuration = { blocking: !push };
      if (push) configuration.pushNotificationConfig = push;
      const r = await rpc('message/send', { message, configuration });
      assert.equal(r?.kind, 'task', `message/send result kind: ${JSON.stringify(r).slice(0, 300)}`);
      return { id: r.id, contextId: r.contextId, state: r.status.state };
    },
    set: async (taskId, config) => {
      const r = await rpc('tasks/pushNotificationConfig/set', { taskId, pushNotificationConfig: config });
      return { taskId: r.taskId, ...r.pushNotificationConfig };
    },
    get: async (taskId, configId) => {
      const r = await rpc('tasks/pushNotificationConfig/get', { id: taskId, pushNotificationConfigId: configId });
      return { taskId: r.taskId, ...r.pushNotificationConfig };
    },
    list: async (taskId) => {
      const r = await rpc('tasks/pushNotificationConfig/list', { id: taskId });
      assert.ok(Array.isArray(r), `list result is not an array: ${JSON.stringify(r)}`);
      return r.map((c) => ({ taskId: c.taskId, ...c.pushNotificationConfig }));
    },
    // delivery checks one delivery and returns its neutral {state, artifactText}.
    delivery: (d, token, taskId) => {
      const b = d.body;
      assert.equal(d.headers['x-a2a-notification-token'], token, 'X-A2A-Notification-Token');
      assert.equal(b.kind, 'task', `0.x delivery must be a bare Task: ${JSON.stringify(b).slice(0, 300)}`);
      assert.equal(b.id, taskId, 'delivered task id');
      for (const key of ['task', 'statusUpdate', 'artifactUpdate']) assert.ok(!(key in b), `1.0 wrapper key ${key} in a 0.x delivery`);
      assert.ok(b.status && RANK[b.status.state] !== undefined, `0.x state: ${JSON.stringify(b.status)}`);
      for (const m of [...(b.history ?? []), ...(b.status.message ? [b.status.message] : [])]) {
        assert.ok(m.role === 'user' || m.role === 'agent', `0.x role ${m.role}`);
        assert.equal(m.kind, 'message', 'message kind');
      }
      const artifactText = b.artifacts?.flatMap((a) => a.parts).find((p) => p.kind === 'text')?.text;
      const userTexts = (b.history ?? []).filter((m) => m.role === 'user').flatMap((m) => m.parts).map((p) => p.text);
      return { state: b.status.state, artifactText, userTexts };
    },
  },
  '1.0': {
    send: async (text, { taskId, contextId, push } = {}) => {
      const message = { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], taskId, contextId };
      const configuration = { returnImmediately: !!push };
      if (push) configuration.taskPushNotificationConfig = push;
      const r = await rpc('SendMessage', { message, configuration });
      assert.ok(r?.task, `SendMessage result is not a task: ${JSON.stringify(r).slice(0, 300)}`);
      assert.match(r.task.status.state, STATE_10);
      return { id: r.task.id, contextId: r.task.contextId, state: from10State(r.task.status.state) };
    },
    set: (taskId, config) => rpc('CreateTaskPushNotificationConfig', { taskId, ...config }),
    get: (taskId, configId) => rpc('GetTaskPushNotificationConfig', { taskId, id: configId }),
    list: async (taskId) => {
      const r = await rpc('ListTaskPushNotificationConfigs', { taskId });
      assert.ok(Array.isArray(r?.configs), `list result has no configs array: ${JSON.stringify(r)}`);
      return r.configs;
    },
    delivery: (d, token, taskId) => {
      const b = d.body;
      if (direct) {
        const sent = [d.headers['a2a-notification-token'], d.headers['x-a2a-notification-token']].filter(Boolean);
        assert.deepEqual(sent, [token], 'the token in one of A2A-Notification-Token, X-A2A-Notification-Token');
      } else {
        assert.equal(d.headers['a2a-notification-token'], token, 'A2A-Notification-Token');
        assert.equal(d.headers['x-a2a-notification-token'], token, 'X-A2A-Notification-Token');
      }
      const keys = Object.keys(b);
      assert.equal(keys.length, 1, `1.0 delivery must be a one-key StreamResponse: ${JSON.stringify(b).slice(0, 300)}`);
      assert.ok(!('kind' in b), '0.x kind in a 1.0 delivery');
      const [key] = keys;
      const v = b[key];
      switch (key) {
        case 'task': {
          assert.equal(v.id, taskId, 'delivered task id');
          assert.match(v.status?.state ?? '', STATE_10);
          const artifactText = v.artifacts?.flatMap((a) => a.parts).find((p) => typeof p.text === 'string')?.text;
          return { state: from10State(v.status.state), artifactText };
        }
        case 'statusUpdate':
          assert.equal(v.taskId, taskId, 'statusUpdate taskId');
          assert.match(v.status?.state ?? '', STATE_10);
          assert.ok(!('final' in v), '0.x final flag in a 1.0 statusUpdate');
          return { state: from10State(v.status.state) };
        case 'artifactUpdate':
          assert.equal(v.taskId, taskId, 'artifactUpdate taskId');
          return { artifactText: v.artifact?.parts?.find((p) => typeof p.text === 'string')?.text };
        default:
          assert.fail(`unexpected StreamResponse member ${key}`);
      }
    },
  },
}[caller];

// --- scenarios -----------------------------------------------------------------

const receiver = new Receiver();
await receiver.start();

// checkDeliveries waits for the final state on hook name, then checks every
// delivery: method, Content-Type, dialect shape and token, and the states'
// order (never going back, the final state last, the artifact seen, the
// states of required among them in that order). Toward 0.x every delivery
// is the whole task as it stands: with history set, each must keep the
// caller's message of that text (a fold into a task the relay lost would
// drop it).
async function checkDeliveries(name, token, taskId, final, { artifact, required = [], history } = {}) {
  const finalSeen = (ds) => ds.some((d) => api.delivery(d, token, taskId).state === final);
  const ds = await receiver.until(name, finalSeen, `a delivery in state ${final}`);
  let rank = -1;
  let finalAt = -1;
  let artifactSeen = false;
  const states = [];
  ds.forEach((d, i) => {
    assert.equal(d.method, 'POST', 'delivery method');
    assert.match(d.headers['content-type'] ?? '', CONTENT_TYPE, 'Content-Type');
    const { state, artifactText, userTexts } = api.delivery(d, token, taskId);
    if (artifactText === artifact) artifactSeen = true;
    if (history && userTexts) {
      assert.ok(userTexts.includes(history), `delivery ${i} lost the caller's message from the history: ${JSON.stringify(d.body).slice(0, 400)}`);
    }
    if (state === undefined) return;
    states.push(state);
    assert.ok(RANK[state] >= rank, `state ${state} after a later state: ${ds.map((x) => JSON.stringify(x.body).slice(0, 120)).join(' | ')}`);
    rank = RANK[state];
    if (state === final && finalAt < 0) finalAt = i;
  });
  for (const d of ds.slice(finalAt + 1)) {
    assert.equal(api.delivery(d, token, taskId).state ?? final, final, 'a delivery after the final state changed it');
  }
  if (artifact) assert.ok(artifactSeen, `artifact "${artifact}" not delivered before ${final}`);
  let next = 0;
  for (const state of states) if (state === required[next]) next++;
  assert.equal(next, required.length, `states ${states.join(',')} do not contain ${required.join(',')} in order`);
  return ds;
}

// checkReadBack asserts get and list show the caller's own url and token.
async function checkReadBack(taskId, configId, url, token) {
  const got = await api.get(taskId, configId);
  assert.equal(got.url, url, 'get: url');
  assert.equal(got.token, token, 'get: token');
  const listed = await api.list(taskId);
  const mine = listed.find((c) => c.id === configId);
  assert.ok(mine, `list has no config ${configId}: ${JSON.stringify(listed)}`);
  for (const c of listed) {
    assert.ok(c.url.startsWith(receiver.base), `list shows a url that is not the caller's: ${c.url}`);
    assert.ok(!c.url.includes('/push/'), `relay url leaked: ${c.url}`);
  }
  assert.equal(mine.token, token, 'list: token');
}

const scenarios = [
  // Inline in the send: every state of "push inline" from submitted on.
  ['push-inline', async () => {
    const name = `inline-${randomUUID()}`;
    const url = receiver.base + name;
    const token = `tok-${randomUUID()}`;
    const text = 'slow push inline';
    const task = await api.send(text, { push: { url, token } });
    await checkDeliveries(name, token, task.id, 'completed', { artifact: `done: ${text}`, required: ['working', 'completed'], history: text });
    const configId = caller === '0.x' ? task.id : (await api.list(task.id))[0]?.id;
    assert.ok(configId, 'inline config listed');
    await checkReadBack(task.id, configId, url, token);
  }],
  // Set/Create on a task waiting for input, then the message that completes it.
  ['push-set', async () => {
    const name = `set-${randomUUID()}`;
    const url = receiver.base + name;
    const token = `tok-${randomUUID()}`;
    const first = await api.send('input please');
    assert.equal(first.state, 'input-required', 'first send stops for input');
    const configId = `cfg-${randomUUID()}`;
    const set = await api.set(first.id, { id: configId, url, token });
    assert.equal(set.url, url, 'set answer: url');
    assert.equal(set.token, token, 'set answer: token');
    await checkReadBack(first.id, configId, url, token);
    await api.send('here is more', { taskId: first.id, contextId: first.contextId });
    await checkDeliveries(name, token, first.id, 'completed', { artifact: 'done: here is more', required: ['working', 'completed'] });
  }],
  // A failing task: the failed state is delivered last.
  ['push-failed', async () => {
    const name = `failed-${randomUUID()}`;
    const url = receiver.base + name;
    const token = `tok-${randomUUID()}`;
    const task = await api.send('fail on purpose', { push: { url, token } });
    await checkDeliveries(name, token, task.id, 'failed', { required: ['failed'] });
  }],
];

const labels = `client=${args.client} backend=${args.backend}${args.tag ? ` ${args.tag}` : ''}`;
let failed = 0;
for (const [name, run] of scenarios) {
  if (only.size > 0 && !only.has(name)) continue;
  try {
    await run();
    console.log(`PASS ${labels} scenario=${name}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${labels} scenario=${name} ${String(err?.message ?? err).replace(/\s+/g, ' ').slice(0, 900)}`);
  }
}
receiver.stop();
process.exitCode = failed > 0 ? 1 : 0;
