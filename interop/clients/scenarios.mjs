// The scenarios every JS client runs, written once against the neutral
// adapter interface each client driver implements (see client-*.mjs). The
// adapters convert the SDK's own objects into neutral ones and reject
// objects of the wrong dialect, so the assertions here can be concrete
// (states, texts, ids) and identical for all clients.
//
// Neutral objects:
//   task:     {kind:'task', id, contextId, state, statusText, artifacts:[{artifactId, name, parts}], history:[msg]}
//   message:  {kind:'message', messageId, role, taskId, contextId, text, parts}
//   status:   {kind:'status-update', taskId, contextId, state, statusText, final}   (final undefined in 1.0)
//   artifact: {kind:'artifact-update', taskId, contextId, artifact}
//   parts:    {text} | {data} | {bytes, mimeType, name} | {uri, mimeType, name}
//   push:     {taskId, id, url, token, scheme}

import { randomUUID } from 'node:crypto';
import { texts as TEXT } from '../agents/script.mjs';
import { assert, collect, expectRpcError, poll } from './harness.mjs';

const TASK_NOT_FOUND = -32001;
const TASK_NOT_CANCELABLE = -32002;
const UNSUPPORTED_OPERATION = -32004;
const INVALID_PARAMS = -32602;
const METHOD_NOT_FOUND = -32601;
const PARSE_ERROR = -32700;

const text = (t) => [{ text: t }];

function assertTask(task, { state, id, contextId, what = 'task' }) {
  assert.equal(task?.kind, 'task', `${what}: expected a task, got ${JSON.stringify(task)?.slice(0, 300)}`);
  assert.ok(task.id, `${what}: task id is empty`);
  assert.ok(task.contextId, `${what}: contextId is empty`);
  if (id !== undefined) assert.equal(task.id, id, `${what}: task id`);
  if (contextId !== undefined) assert.equal(task.contextId, contextId, `${what}: contextId`);
  if (state !== undefined) assert.equal(task.state, state, `${what}: state (status text ${JSON.stringify(task.statusText)})`);
}

function artifactTexts(task) {
  return task.artifacts.flatMap((a) => a.parts.filter((p) => typeof p.text === 'string').map((p) => p.text));
}

function assertDone(task, input) {
  assert.equal(task.artifacts.length, 1, `expected one artifact, got ${JSON.stringify(task.artifacts)}`);
  assert.equal(task.artifacts[0].name, 'result', 'artifact name');
  assert.ok(task.artifacts[0].artifactId, 'artifactId is empty');
  assert.deepEqual(artifactTexts(task), [TEXT.done(input)], 'artifact text');
}

// assertStreamOrder checks the event sequence of one stream cycle:
// kinds in order, all bound to one task, and the 0.x "final" flag set on
// exactly the last status update when the client dialect carries it.
function assertStreamCycle(events, kinds, { dialect, taskId }) {
  assert.deepEqual(
    events.map((e) => (e.kind === 'status-update' ? `status:${e.state}` : e.kind)),
    kinds,
    'stream event sequence',
  );
  const id = taskId ?? events[0].id;
  for (const event of events) {
    assert.equal(event.kind === 'task' ? event.id : event.taskId, id, `${event.kind} bound to another task`);
  }
  if (dialect !== '1.0') {
    const statuses = events.filter((e) => e.kind === 'status-update');
    statuses.forEach((e, i) => {
      assert.equal(e.final, i === statuses.length - 1, `status-update ${e.state}: final flag (the stream closes after the last one)`);
    });
  }
}

// What the native SDK servers answer against their own spec. Only direct
// runs (no gateway) accept these, and assert the deviating answer exactly,
// so a peer that changes shows up; through a gateway the spec's answer is
// required. Evidence is next to each scenario.
const NATIVE_DEVIATIONS = {
  'history-length-send': ['js-0.2.5', 'js-0.3', 'go-2.3.1'],
  'error-malformed-json': ['js-0.2.5'],
};

export function registerScenarios(h, a, { backendDialect, backend, tag }) {
  const dialect = a.dialect;
  const expected = { ...TEXT };
  const direct = tag.split(' ').includes('via=direct');
  const deviates = (scenario) => direct && NATIVE_DEVIATIONS[scenario].includes(backend);

  h.scenario('discovery', async () => {
    const card = await a.discover();
    assert.ok(card.name.startsWith('interop-agent'), `card name ${JSON.stringify(card.name)} is not the backend agent's`);
    // The card's endpoint is the URL the client was given, up to a
    // trailing slash (clients need one on the base URL to resolve
    // .well-known/ under a path; the endpoint itself may lack it).
    // A gRPC client dials the card's target instead, host:port.
    const bare = (u) => new URL(u).href.replace(/\/$/, '');
    if (a.transport === 'GRPC') assert.equal(card.endpoint, new URL(a.baseUrl).host, 'gRPC target the client resolved from the card');
    else assert.equal(bare(card.endpoint), bare(a.baseUrl), 'JSON-RPC endpoint the client resolved from the card');
    assert.equal(card.binding, 'JSONRPC', 'transport binding');
    // The client configured for another binding picked that interface.
    if (a.transport) assert.equal(card.transportBinding, a.transport, 'binding of the transport the client picked');
    assert.ok(card.protocolVersion.startsWith(a.cardProtocolPrefix), `protocolVersion ${card.protocolVersion} for a ${dialect} client`);
    assert.equal(card.streaming, true, 'capabilities.streaming');
    assert.equal(card.pushNotifications, true, 'capabilities.pushNotifications');
    // The client really talks to that endpoint: a round trip through it.
    const answer = await a.send({ parts: text('ping?') });
    assert.equal(answer.kind, 'message');
  });

  h.scenario('blocking-send', async () => {
    const input = `hello ${randomUUID().slice(0, 8)}`;
    const task = await a.send({ parts: text(input) }, { blocking: true });
    assertTask(task, { state: 'completed' });
    assertDone(task, input);
    const fetched = await a.get(task.id, 10);
    assertTask(fetched, { state: 'completed', id: task.id, contextId: task.contextId, what: 'get after send' });
    assertDone(fetched, input);
    assert.equal(fetched.history[0]?.role, 'user', 'first history message is the user message');
    assert.equal(fetched.history[0]?.text, input, 'user message text in history');
  });

  h.scenario('direct-message', async () => {
    const question = `what is ${randomUUID().slice(0, 6)}?`;
    const contextId = randomUUID();
    const reply = await a.send({ parts: text(question), contextId });
    assert.equal(reply.kind, 'message', `expected a direct message, got ${JSON.stringify(reply)?.slice(0, 300)}`);
    assert.equal(reply.role, 'agent');
    assert.equal(reply.text, expected.answer(question));
    assert.equal(reply.contextId, contextId, 'reply keeps the caller contextId');
    assert.ok(reply.messageId, 'messageId is empty');
  });

  h.scenario('data-and-file-parts', async () => {
    const parts = [
      { text: 'echo parts' },
      { data: { city: 'Paris', count: 3, tags: ['a', 'b'], nested: { ok: true, nothing: null } } },
      { bytes: Buffer.from('hello bytes \u00e9\u00e8').toString('base64'), mimeType: 'text/plain', name: 'hello.txt' },
      { uri: 'https://example.com/files/report.pdf', mimeType: 'application/pdf', name: 'report.pdf' },
    ];
    const task = await a.send({ parts });
    assertTask(task, { state: 'completed' });
    assert.equal(task.artifacts.length, 1);
    assert.deepEqual(task.artifacts[0].parts, [{ text: 'done: echo parts' }, ...parts.slice(1)], 'artifact parts echo the message parts');
    const fetched = await a.get(task.id, 10);
    assert.deepEqual(fetched.history[0].parts, parts, 'user message parts stored by the backend');
  });

  if (a.sendsNonObjectData) {
    // 1.0 data parts hold any JSON value; 0.x ones only objects. Toward a
    // 0.x backend a gateway has to wrap the others ({"value": X} plus part
    // metadata data_part_compat, the convention of the Python, Go and JS
    // compat layers) and unwrap them on the way back.
    h.scenario('data-non-object', async () => {
      const parts = [{ text: 'echo values' }, { data: [1, 'two', { three: 3 }] }, { data: 'plain string' }, { data: 42 }, { data: true }];
      const task = await a.send({ parts });
      assertTask(task, { state: 'completed' });
      assert.deepEqual(task.artifacts[0]?.parts, [{ text: 'done: echo values' }, ...parts.slice(1)], 'artifact parts echo the values');
      const fetched = await a.get(task.id, 10);
      assert.deepEqual(fetched.history[0].parts, parts, 'user message parts stored by the backend');
    });
  }

  h.scenario('failing-task', async () => {
    const task = await a.send({ parts: text('fail please') });
    assertTask(task, { state: 'failed' });
    assert.equal(task.statusText, expected.failed('fail please'), 'failure status message');
    assert.deepEqual(task.artifacts, [], 'a failed task has no artifact');
    const fetched = await a.get(task.id);
    assertTask(fetched, { state: 'failed', id: task.id });
  });

  h.scenario('non-blocking-poll', async () => {
    const input = 'slow job';
    const first = await a.send({ parts: text(input) }, { blocking: false });
    assertTask(first, {});
    assert.ok(['submitted', 'working'].includes(first.state), `non-blocking send returned state ${first.state}, expected submitted or working`);
    const done = await poll(() => a.get(first.id), (t) => t.state === 'completed', { what: 'task completion' });
    assertTask(done, { state: 'completed', id: first.id, contextId: first.contextId });
    assertDone(done, input);
  });

  h.scenario('history-length', async () => {
    const input = 'history check';
    const task = await a.send({ parts: text(input) });
    assertTask(task, { state: 'completed' });
    const full = await a.get(task.id, 10);
    assert.deepEqual(full.history.map((m) => [m.role, m.text]), [['user', input], ['agent', expected.working(input)]], 'full history');
    const one = await a.get(task.id, 1);
    assert.deepEqual(one.history.map((m) => [m.role, m.text]), [['agent', expected.working(input)]], 'historyLength=1 keeps the latest message');
    const two = await a.get(task.id, 2);
    assert.equal(two.history.length, 2, 'historyLength=2');
    if (dialect === '1.0') {
      // In 1.0 an unset historyLength means no limit (issue 23 item 1).
      const unset = await a.get(task.id);
      assert.deepEqual(unset.history.map((m) => [m.role, m.text]), [['user', input], ['agent', expected.working(input)]], 'history without historyLength (1.0: no limit)');
    }
  });

  // The 0.x JS servers ignore configuration.historyLength on message/send
  // (node_modules/sdk025/dist/server/index.js sendMessage from line 409 and
  // node_modules/sdk03/dist/server/index.js sendMessage from line 703 never
  // read it), although both the 0.2.5 and 0.3 schemas define it as "number
  // of recent messages to be retrieved" for the send; so does a2a-go v2.3.1
  // (a2asrv/handler.go SendMessage returns the stored task untrimmed; only
  // GetTask reads historyLength). Direct runs against those servers see the
  // whole history (NATIVE_DEVIATIONS); a gateway can honour it by trimming
  // the reply.
  h.scenario('history-length-send', async () => {
    const input = 'history on send';
    const sent = await a.send({ parts: text(input) }, { historyLength: 1 });
    assertTask(sent, { state: 'completed' });
    const want = deviates('history-length-send')
      ? [['user', input], ['agent', expected.working(input)]]
      : [['agent', expected.working(input)]];
    assert.deepEqual(sent.history.map((m) => [m.role, m.text]), want, 'send with historyLength=1');
  });

  h.scenario('stream-task', async () => {
    const input = 'stream me';
    const events = await collect(a.stream({ parts: text(input) }));
    assertStreamCycle(events, ['task', 'status:working', 'artifact-update', 'status:completed'], { dialect });
    assertTask(events[0], { state: 'submitted', what: 'first stream event' });
    assert.equal(events[1].statusText, expected.working(input));
    assert.deepEqual(events[2].artifact.parts, text(expected.done(input)));
    const fetched = await a.get(events[0].id);
    assertTask(fetched, { state: 'completed', id: events[0].id, contextId: events[0].contextId });
  });

  h.scenario('stream-message', async () => {
    const question = 'streamed question?';
    const events = await collect(a.stream({ parts: text(question) }));
    assert.deepEqual(events.map((e) => e.kind), ['message'], 'a direct answer streams exactly one message');
    assert.equal(events[0].text, expected.answer(question));
    assert.equal(events[0].role, 'agent');
  });

  h.scenario('input-required-blocking', async () => {
    const first = await a.send({ parts: text('input needed') });
    assertTask(first, { state: 'input-required' });
    assert.equal(first.statusText, expected.inputNeeded);
    const more = 'the missing detail';
    const done = await a.send({ parts: text(more), taskId: first.id, contextId: first.contextId });
    assertTask(done, { state: 'completed', id: first.id, contextId: first.contextId, what: 'continuation' });
    assertDone(done, more);
    const fetched = await a.get(first.id, 10);
    assert.deepEqual(
      fetched.history.filter((m) => m.role === 'user').map((m) => m.text),
      ['input needed', more],
      'both user turns are in the task history',
    );
  });

  h.scenario('input-required-stream', async () => {
    const firstCycle = await collect(a.stream({ parts: text('input via stream') }));
    assertStreamCycle(firstCycle, ['task', 'status:input-required'], { dialect });
    assert.equal(firstCycle[1].statusText, expected.inputNeeded);
    const { id, contextId } = firstCycle[0];
    const more = 'streamed detail';
    const second = await collect(a.stream({ parts: text(more), taskId: id, contextId }));
    assertStreamCycle(second, ['task', 'status:working', 'artifact-update', 'status:completed'], { dialect, taskId: id });
    assert.deepEqual(second[2].artifact.parts, text(expected.done(more)));
    assertTask(await a.get(id), { state: 'completed', id, contextId });
  });

  h.scenario('cancel-task', async () => {
    const running = await a.send({ parts: text('wait for cancel') }, { blocking: false });
    assertTask(running, {});
    assert.ok(['submitted', 'working'].includes(running.state), `state before cancel: ${running.state}`);
    const canceled = await a.cancel(running.id);
    assertTask(canceled, { state: 'canceled', id: running.id, what: 'cancel result' });
    const fetched = await a.get(running.id);
    assertTask(fetched, { state: 'canceled', id: running.id, what: 'get after cancel' });
    assert.equal(fetched.statusText, expected.canceled, 'cancel status message');
    // A repeated cancel is refused with TaskNotCancelable, except that 1.x
    // JS servers answer it with the canceled task itself
    // (node_modules/sdk10/dist/server/index.js line 3217, DefaultRequestHandler
    // .cancelTask: "if (currentState === 5 /* TASK_STATE_CANCELED */)
    // return task").
    let again;
    try {
      again = await a.cancel(running.id);
    } catch (err) {
      assert.equal(a.codeOf(err), TASK_NOT_CANCELABLE, `second cancel: ${err.message}`);
      return;
    }
    assert.equal(backendDialect, '1.0', `second cancel succeeded: ${JSON.stringify(again)?.slice(0, 200)}`);
    assertTask(again, { state: 'canceled', id: running.id, what: 'second cancel' });
  });

  h.scenario('cancel-terminal', async () => {
    const task = await a.send({ parts: text('finish first') });
    assertTask(task, { state: 'completed' });
    await expectRpcError(() => a.cancel(task.id), [TASK_NOT_CANCELABLE], a.codeOf);
  });

  if (dialect === '1.0') {
    // 1.0 (a2a.proto SubscribeToTask): UnsupportedOperationError for a
    // task already in a terminal state. a2a-go v2 servers answer -32001
    // ("no active execution", internal/taskexec/local_manager.go
    // Resubscribe), accepted in direct runs only. 0.x callers have no rule
    // to check (the 0.x JS servers stream the final task and close).
    h.scenario('subscribe-final', async () => {
      const task = await a.send({ parts: text('finish first') });
      assertTask(task, { state: 'completed' });
      const codes = direct && backend === 'go-2.3.1' ? [TASK_NOT_FOUND] : [UNSUPPORTED_OPERATION];
      await expectRpcError(() => collect(a.resubscribe(task.id)), codes, a.codeOf);
    });

    // A message continuing a task in a terminal state: UnsupportedOperation
    // for a 1.0 caller (what the JS 1.x server answers). a2a-go v2 servers
    // answer -32602 (a2asrv/agentexec.go loadExecutionContext), accepted in
    // direct runs only. 0.x JS servers answer -32600 (no 0.x rule).
    h.scenario('continue-final', async () => {
      const task = await a.send({ parts: text('finish first') });
      assertTask(task, { state: 'completed' });
      const codes = direct && backend === 'go-2.3.1' ? [INVALID_PARAMS] : [UNSUPPORTED_OPERATION];
      await expectRpcError(() => a.send({ parts: text('one more thing'), taskId: task.id, contextId: task.contextId }), codes, a.codeOf);
    });
  }

  h.scenario('resubscribe', async () => {
    const running = await a.send({ parts: text('wait on resubscribe') }, { blocking: false });
    assertTask(running, {});
    const iterator = a.resubscribe(running.id)[Symbol.asyncIterator]();
    const first = await iterator.next();
    assert.equal(first.done, false, 'resubscribe stream ended before its first event');
    assertTask(first.value, { id: running.id, contextId: running.contextId, what: 'first resubscribe event' });
    assert.ok(['submitted', 'working'].includes(first.value.state), `resubscribed task state ${first.value.state}`);
    const canceled = await a.cancel(running.id);
    assertTask(canceled, { state: 'canceled', id: running.id });
    const rest = [];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      rest.push(next.value);
    }
    const last = rest.at(-1);
    assert.equal(last?.kind, 'status-update', `last resubscribe event: ${JSON.stringify(rest).slice(0, 400)}`);
    assert.equal(last.state, 'canceled');
    assert.equal(last.taskId, running.id);
    assert.equal(last.statusText, expected.canceled);
    if (dialect !== '1.0') assert.equal(last.final, true, 'canceled update is final');
    for (const event of rest) {
      assert.equal(event.kind === 'task' ? event.id : event.taskId, running.id, 'event for another task');
    }
    if (dialect === '1.0') {
      // 1.0: exactly one task snapshot, first (issue 23 item 2).
      assert.ok(rest.every((e) => e.kind !== 'task'), `a second task snapshot after the first: ${rest.map((e) => e.kind).join(',')}`);
    }
  });

  h.scenario('push-config', async () => {
    const task = await a.send({ parts: text('push config holder') });
    assertTask(task, { state: 'completed' });
    if (a.pushIdsFromServer) {
      // The 0.2.5 client: config ids are "created by server" (0.2.5 schema,
      // PushNotificationConfig.id) and its get takes the task id only
      // (TaskIdParams), so it reads back "the" config of the task.
      const config = { url: 'https://hooks.example.com/a2a', token: 'secret-token', scheme: 'Bearer' };
      const set = await a.setPush(task.id, config);
      assert.deepEqual({ ...set, id: undefined }, { taskId: task.id, ...config, id: undefined }, 'set result');
      const got = await a.getPush(task.id);
      assert.deepEqual(got, set, 'get by task id returns the config just set');
      return;
    }
    const config = { id: 'cfg-1', url: 'https://hooks.example.com/a2a', token: 'secret-token', scheme: 'Bearer' };
    const set = await a.setPush(task.id, config);
    assert.deepEqual(set, { taskId: task.id, ...config }, 'set/create result');
    const got = await a.getPush(task.id, config.id);
    assert.deepEqual(got, { taskId: task.id, ...config }, 'get result');
    // The 0.2.5 JS server implements neither list nor delete although the
    // 0.2.5 schema defines both (node_modules/sdk025/dist/server/index.js,
    // JsonRpcTransportHandler.handle: only set/get in the switch from line
    // 698, anything else is methodNotFound). Through the gateway both work:
    // the gateway owns every push config and answers them from its store.
    const unsupported = direct && backendDialect === '0.2.5' ? [METHOD_NOT_FOUND, UNSUPPORTED_OPERATION] : null;
    if (unsupported) {
      await expectRpcError(() => a.listPush(task.id), unsupported, a.codeOf);
      await expectRpcError(() => a.deletePush(task.id, config.id), unsupported, a.codeOf);
      return;
    }
    const listed = await a.listPush(task.id);
    assert.deepEqual(listed, [{ taskId: task.id, ...config }], 'list result');
    await a.deletePush(task.id, config.id);
    assert.deepEqual(await a.listPush(task.id), [], 'list after delete');
  });

  if (a.listTasks) {
    h.scenario('list-tasks', async () => {
      const contextId = randomUUID();
      const one = await a.send({ parts: text('list one'), contextId });
      const two = await a.send({ parts: text('list two'), contextId });
      assertTask(one, { state: 'completed', contextId });
      assertTask(two, { state: 'completed', contextId });
      // 0.x backends have no list method: the gateway serves ListTasks from
      // its task index for every backend dialect, so the answer is the same.
      const page = await a.listTasks({ contextId, pageSize: 10 });
      assert.deepEqual(page.tasks.map((t) => t.id).sort(), [one.id, two.id].sort(), 'tasks of the context');
      assert.ok(page.tasks.every((t) => t.state === 'completed'), 'listed states');
      assert.equal(page.totalSize, 2, 'totalSize');
      assert.equal(page.nextPageToken, '', 'nextPageToken on the last page');
      const firstPage = await a.listTasks({ contextId, pageSize: 1 });
      assert.equal(firstPage.tasks.length, 1, 'pageSize=1');
      assert.ok(firstPage.nextPageToken, 'nextPageToken when more tasks remain');
    });
  }

  const unknownId = () => `no-such-task-${randomUUID()}`;

  h.scenario('error-get-unknown', () => expectRpcError(() => a.get(unknownId()), TASK_NOT_FOUND, a.codeOf));

  h.scenario('error-cancel-unknown', () => expectRpcError(() => a.cancel(unknownId()), TASK_NOT_FOUND, a.codeOf));

  h.scenario('error-subscribe-unknown', () =>
    expectRpcError(() => collect(a.resubscribe(unknownId())), TASK_NOT_FOUND, a.codeOf));

  h.scenario('error-continue-unknown', () =>
    expectRpcError(() => a.send({ parts: text('continue nothing'), taskId: unknownId() }), TASK_NOT_FOUND, a.codeOf));

  h.scenario('error-stream-continue-unknown', () =>
    expectRpcError(() => collect(a.stream({ parts: text('continue nothing'), taskId: unknownId() })), TASK_NOT_FOUND, a.codeOf));

  h.scenario('error-unknown-method', async () => {
    const id = `req-${randomUUID()}`;
    const { json } = await a.rawRpc(JSON.stringify({ jsonrpc: '2.0', id, method: a.unknownMethod, params: {} }));
    assert.equal(json?.jsonrpc, '2.0', `not a JSON-RPC response: ${JSON.stringify(json)}`);
    assert.equal(json.error?.code, METHOD_NOT_FOUND, `error: ${JSON.stringify(json.error)}`);
    assert.equal(json.id, id, 'response id echoes the request id');
  });

  // The 0.2.5 JS server answers malformed JSON with Express's HTML 400 page
  // instead of a -32700 JSON-RPC error: A2AExpressApp.setupRoutes installs
  // express.json() without an error handler
  // (node_modules/sdk025/dist/server/index.js line 756). Direct runs against
  // it see that page (NATIVE_DEVIATIONS); a gateway parses the body itself
  // and must answer -32700.
  h.scenario('error-malformed-json', async () => {
    const body = '{"jsonrpc": "2.0", "id": 7, "method": "message/send", "params": {';
    if (deviates('error-malformed-json')) {
      await assert.rejects(a.rawRpc(body), /HTTP 400 with a non-JSON body/, 'the 0.2.5 server\'s HTML 400 page');
      return;
    }
    const { json } = await a.rawRpc(body);
    assert.equal(json?.jsonrpc, '2.0', `not a JSON-RPC response: ${JSON.stringify(json)}`);
    assert.equal(json.error?.code, PARSE_ERROR, `error: ${JSON.stringify(json.error)}`);
    assert.equal(json.id, null, 'a parse error answers with id null');
  });
}
