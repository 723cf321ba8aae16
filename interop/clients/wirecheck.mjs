// Strict shape checks of the raw JSON-RPC payloads a client received.
// The SDK clients are lenient (the 1.x client's ts-proto fromJSON ignores
// unknown keys, the 0.x clients pass objects through untouched), so a
// gateway leaking one dialect's keys into the other would go unnoticed by
// them but break strict peers (Python 1.0 and Java parse ProtoJSON
// strictly). These checks make such leaks fail the scenario.

const STATES_0X = new Set(['submitted', 'working', 'input-required', 'completed', 'canceled', 'failed', 'rejected', 'auth-required', 'unknown']);
const STATES_10 = new Set([
  'TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_COMPLETED',
  'TASK_STATE_CANCELED', 'TASK_STATE_FAILED', 'TASK_STATE_REJECTED', 'TASK_STATE_AUTH_REQUIRED',
]);

class ShapeError extends Error {}

function fail(path, why) {
  throw new ShapeError(`wire shape at ${path}: ${why}`);
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function keysWithin(obj, allowed, path) {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) {
      fail(path, `unexpected key ${JSON.stringify(key)} (allowed: ${allowed.join(', ')})`);
    }
  }
}

function str(v, path) {
  if (typeof v !== 'string') fail(path, `expected a string, got ${JSON.stringify(v)}`);
}

function each(list, path, check) {
  if (list === undefined) return;
  if (!Array.isArray(list)) fail(path, 'expected an array');
  list.forEach((item, i) => check(item, `${path}[${i}]`));
}

// ---- 0.2.5 / 0.3 (JSON Schema shapes, kind discriminators) ----

function part0x(p, path) {
  if (!isObject(p)) fail(path, 'part is not an object');
  switch (p.kind) {
    case 'text':
      keysWithin(p, ['kind', 'text', 'metadata'], path);
      str(p.text, `${path}.text`);
      break;
    case 'data':
      keysWithin(p, ['kind', 'data', 'metadata'], path);
      if (!isObject(p.data)) fail(`${path}.data`, 'data part must hold an object in 0.x');
      break;
    case 'file': {
      keysWithin(p, ['kind', 'file', 'metadata'], path);
      if (!isObject(p.file)) fail(`${path}.file`, 'missing file object');
      keysWithin(p.file, ['bytes', 'uri', 'mimeType', 'name'], `${path}.file`);
      if (('bytes' in p.file) === ('uri' in p.file)) fail(`${path}.file`, 'exactly one of bytes/uri');
      break;
    }
    default:
      fail(path, `part kind ${JSON.stringify(p.kind)}`);
  }
}

function message0x(m, path) {
  if (!isObject(m)) fail(path, 'message is not an object');
  keysWithin(m, ['kind', 'messageId', 'role', 'parts', 'contextId', 'taskId', 'referenceTaskIds', 'extensions', 'metadata'], path);
  if (m.kind !== 'message') fail(`${path}.kind`, `expected "message", got ${JSON.stringify(m.kind)}`);
  str(m.messageId, `${path}.messageId`);
  if (m.role !== 'user' && m.role !== 'agent') fail(`${path}.role`, JSON.stringify(m.role));
  each(m.parts, `${path}.parts`, part0x);
}

function status0x(s, path) {
  if (!isObject(s)) fail(path, 'status is not an object');
  keysWithin(s, ['state', 'message', 'timestamp'], path);
  if (!STATES_0X.has(s.state)) fail(`${path}.state`, JSON.stringify(s.state));
  if (s.message !== undefined) message0x(s.message, `${path}.message`);
}

function artifact0x(a, path) {
  keysWithin(a, ['artifactId', 'name', 'description', 'parts', 'metadata', 'extensions'], path);
  str(a.artifactId, `${path}.artifactId`);
  each(a.parts, `${path}.parts`, part0x);
}

function task0x(t, path) {
  keysWithin(t, ['kind', 'id', 'contextId', 'status', 'history', 'artifacts', 'metadata'], path);
  if (t.kind !== 'task') fail(`${path}.kind`, `expected "task", got ${JSON.stringify(t.kind)}`);
  str(t.id, `${path}.id`);
  str(t.contextId, `${path}.contextId`);
  status0x(t.status, `${path}.status`);
  each(t.history, `${path}.history`, message0x);
  each(t.artifacts, `${path}.artifacts`, artifact0x);
}

function pushConfig0x(c, path) {
  keysWithin(c, ['taskId', 'pushNotificationConfig'], path);
  str(c.taskId, `${path}.taskId`);
  keysWithin(c.pushNotificationConfig, ['id', 'url', 'token', 'authentication'], `${path}.pushNotificationConfig`);
  const auth = c.pushNotificationConfig.authentication;
  if (auth !== undefined) {
    keysWithin(auth, ['schemes', 'credentials'], `${path}.pushNotificationConfig.authentication`);
    if (!Array.isArray(auth.schemes)) fail(`${path}.pushNotificationConfig.authentication.schemes`, 'expected an array');
  }
}

function result0x(r, path) {
  if (r === null) return; // tasks/pushNotificationConfig/delete
  if (Array.isArray(r)) {
    each(r, path, pushConfig0x);
    return;
  }
  if (!isObject(r)) fail(path, `unexpected result ${JSON.stringify(r)}`);
  switch (r.kind) {
    case 'task':
      return task0x(r, path);
    case 'message':
      return message0x(r, path);
    case 'status-update':
      keysWithin(r, ['kind', 'taskId', 'contextId', 'status', 'final', 'metadata'], path);
      str(r.taskId, `${path}.taskId`);
      str(r.contextId, `${path}.contextId`);
      status0x(r.status, `${path}.status`);
      if (typeof r.final !== 'boolean') fail(`${path}.final`, 'must be an explicit boolean (required by the 0.2.5/0.3 schema)');
      return;
    case 'artifact-update':
      keysWithin(r, ['kind', 'taskId', 'contextId', 'artifact', 'append', 'lastChunk', 'metadata'], path);
      str(r.taskId, `${path}.taskId`);
      return artifact0x(r.artifact, `${path}.artifact`);
    case undefined:
      return pushConfig0x(r, path);
    default:
      fail(`${path}.kind`, JSON.stringify(r.kind));
  }
}

// ---- 1.0 (ProtoJSON of lf.a2a.v1) ----

function part10(p, path) {
  keysWithin(p, ['text', 'raw', 'url', 'data', 'metadata', 'filename', 'mediaType'], path);
  const members = ['text', 'raw', 'url', 'data'].filter((k) => k in p);
  if (members.length !== 1) fail(path, `exactly one of text/raw/url/data, got ${members.join(',') || 'none'}`);
}

function message10(m, path) {
  keysWithin(m, ['messageId', 'contextId', 'taskId', 'role', 'parts', 'metadata', 'extensions', 'referenceTaskIds'], path);
  str(m.messageId, `${path}.messageId`);
  if (m.role !== 'ROLE_USER' && m.role !== 'ROLE_AGENT') fail(`${path}.role`, JSON.stringify(m.role));
  each(m.parts, `${path}.parts`, part10);
}

function status10(s, path) {
  keysWithin(s, ['state', 'message', 'timestamp'], path);
  if (!STATES_10.has(s.state)) fail(`${path}.state`, JSON.stringify(s.state));
  if (s.message !== undefined) message10(s.message, `${path}.message`);
  if (s.timestamp !== undefined && !/Z$/.test(s.timestamp)) fail(`${path}.timestamp`, `not UTC "Z" form: ${s.timestamp}`);
}

function artifact10(a, path) {
  keysWithin(a, ['artifactId', 'name', 'description', 'parts', 'metadata', 'extensions'], path);
  str(a.artifactId, `${path}.artifactId`);
  each(a.parts, `${path}.parts`, part10);
}

function task10(t, path) {
  keysWithin(t, ['id', 'contextId', 'status', 'artifacts', 'history', 'metadata'], path);
  str(t.id, `${path}.id`);
  status10(t.status, `${path}.status`);
  each(t.history, `${path}.history`, message10);
  each(t.artifacts, `${path}.artifacts`, artifact10);
}

function pushConfig10(c, path) {
  keysWithin(c, ['tenant', 'id', 'taskId', 'url', 'token', 'authentication'], path);
  if (c.authentication !== undefined) {
    keysWithin(c.authentication, ['scheme', 'credentials'], `${path}.authentication`);
    str(c.authentication.scheme, `${path}.authentication.scheme`);
  }
}

function result10(r, path) {
  if (r === null || (isObject(r) && Object.keys(r).length === 0)) return; // Empty
  if (!isObject(r)) fail(path, `unexpected result ${JSON.stringify(r)}`);
  const keys = Object.keys(r);
  if (keys.length === 1 && ['task', 'message', 'statusUpdate', 'artifactUpdate'].includes(keys[0])) {
    const [key] = keys;
    if (key === 'task') return task10(r.task, `${path}.task`);
    if (key === 'message') return message10(r.message, `${path}.message`);
    if (key === 'statusUpdate') {
      keysWithin(r.statusUpdate, ['taskId', 'contextId', 'status', 'metadata'], `${path}.statusUpdate`);
      return status10(r.statusUpdate.status, `${path}.statusUpdate.status`);
    }
    keysWithin(r.artifactUpdate, ['taskId', 'contextId', 'artifact', 'append', 'lastChunk', 'metadata'], `${path}.artifactUpdate`);
    return artifact10(r.artifactUpdate.artifact, `${path}.artifactUpdate.artifact`);
  }
  if ('status' in r && 'id' in r) return task10(r, path);
  if ('tasks' in r) {
    keysWithin(r, ['tasks', 'nextPageToken', 'pageSize', 'totalSize'], path);
    for (const required of ['nextPageToken', 'pageSize', 'totalSize']) {
      if (!(required in r)) fail(path, `ListTasksResponse.${required} is required`);
    }
    return each(r.tasks, `${path}.tasks`, task10);
  }
  if ('configs' in r) {
    keysWithin(r, ['configs', 'nextPageToken'], path);
    return each(r.configs, `${path}.configs`, pushConfig10);
  }
  if ('url' in r) return pushConfig10(r, path);
  fail(path, `unrecognised 1.0 result with keys ${keys.join(',')}`);
}

function error10(e, path) {
  if (e.data === undefined) return;
  if (!Array.isArray(e.data)) fail(`${path}.data`, '1.0 error data must be an array of Any objects');
  e.data.forEach((d, i) => {
    if (!isObject(d) || typeof d['@type'] !== 'string') fail(`${path}.data[${i}]`, 'missing "@type"');
  });
}

// checkPayloads validates every JSON-RPC response a scenario received.
export function checkPayloads(dialect, payloads) {
  payloads.forEach((payload, i) => {
    if (!isObject(payload) || payload.jsonrpc !== '2.0') return; // agent cards
    const path = `response[${i}]`;
    if ('error' in payload) {
      if (!Number.isInteger(payload.error?.code)) fail(`${path}.error.code`, 'not an integer');
      if (dialect === '1.0') error10(payload.error, `${path}.error`);
      return;
    }
    if (!('result' in payload)) {
      // JSON-RPC 2.0 requires "result" on success; only a 1.0 Empty
      // (DeleteTaskPushNotificationConfig) is ambiguous in the SDKs.
      if (dialect !== '1.0') fail(path, 'success response without "result"');
      return;
    }
    if (dialect === '1.0') result10(payload.result, `${path}.result`);
    else result0x(payload.result, `${path}.result`);
  });
}
