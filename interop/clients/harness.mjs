// Scenario harness shared by the JS client drivers: command line, the
// PASS/FAIL line format run.sh counts, assertions, and a fetch recorder
// that proves every request of a scenario went to the URL under test (so a
// card that leaks the backend's address fails discovery instead of quietly
// bypassing the gateway).

import assert from 'node:assert/strict';
import { parseArgs } from 'node:util';
import { checkPayloads } from './wirecheck.mjs';

export { assert };

// JSONRPC_ONLY are the scenarios that post a hand-made JSON-RPC envelope
// (an unknown method name, a truncated body): the REST binding has no
// method name or envelope to get wrong; its own error answers (unknown
// route, bad JSON, wrong verb) are binding/rest's golden tests.
const JSONRPC_ONLY = new Set(['error-unknown-method', 'error-malformed-json']);

export function skipFor(transport, dialect) {
  return (name) => {
    if (transport === 'jsonrpc') return '';
    if (JSONRPC_ONLY.has(name)) return `skipped over ${PROTOCOL_OF[transport]}: the scenario posts a hand-made JSON-RPC envelope`;
    // The 0.3 proto's FilePart has no name (a2a-v0.3.0.proto FilePart:
    // file_with_uri, file_with_bytes, mime_type), and @a2a-js/sdk 0.3.14's
    // REST and gRPC clients drop the file names before sending (both
    // convert through ToProto.part, dist/chunk-5ONEQMOQ.js line 1927).
    if (dialect === '0.3' && name === 'data-and-file-parts') return `skipped over 0.3 ${PROTOCOL_OF[transport]}: the 0.3 proto FilePart has no name field`;
    return '';
  };
}

export function clientArgs() {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      client: { type: 'string' },
      backend: { type: 'string' },
      'backend-dialect': { type: 'string' },
      only: { type: 'string', default: '' },
      tag: { type: 'string', default: '' },
      'timeout-ms': { type: 'string', default: '20000' },
      transport: { type: 'string', default: 'jsonrpc' },
    },
  });
  for (const required of ['url', 'client', 'backend', 'backend-dialect']) {
    if (!values[required]) {
      throw new Error(`missing --${required}`);
    }
  }
  return {
    url: values.url,
    client: values.client,
    backend: values.backend,
    backendDialect: values['backend-dialect'],
    only: new Set(values.only.split(',').filter(Boolean)),
    tag: values.tag,
    timeoutMs: Number(values['timeout-ms']),
    transport: values.transport,
  };
}

// PROTOCOL_OF is the card's protocol name of each --transport.
export const PROTOCOL_OF = { jsonrpc: 'JSONRPC', rest: 'HTTP+JSON', grpc: 'GRPC' };

// factoryOptions makes the SDK's ClientFactory prefer the transport, the
// way an application configures it: the default transports (JSON-RPC and
// REST in @a2a-js/sdk 0.3.x and 1.x) stay registered, with the optional
// ones (the gRPC factory of ./client/grpc) added to them, and
// preferredTransports decides which of the card's interfaces is used.
export function factoryOptions(ClientFactoryOptions, transport, added = []) {
  const protocol = PROTOCOL_OF[transport];
  if (!protocol) throw new Error(`unknown --transport ${transport} (jsonrpc, rest or grpc)`);
  // JSON-RPC keeps the SDK's default client: the card's order must make it
  // pick JSON-RPC unasked, as in front of a native agent.
  if (transport === 'jsonrpc') return ClientFactoryOptions.default;
  return ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: added, preferredTransports: [protocol] });
}

// SDK_CODES maps the SDKs' typed errors of the REST and gRPC transports
// back to the A2A codes the scenarios assert: those errors carry no
// JSON-RPC code, only their class (@a2a-js/sdk 1.x fromRestErrorBody and
// fromGrpcError pick it from the ErrorInfo reason, 0.3.x
// RestTransport.mapToError from the body's code, GrpcTransport.mapToError
// from the status code).
const SDK_CODES = {
  TaskNotFoundError: -32001,
  TaskNotCancelableError: -32002,
  PushNotificationNotSupportedError: -32003,
  UnsupportedOperationError: -32004,
  ContentTypeNotSupportedError: -32005,
  InvalidAgentResponseError: -32006,
  InvalidParamsError: -32602,
  MethodNotFoundError: -32601,
  InternalError: -32603,
  // @a2a-js/sdk 1.x's class for the INVALID_PARAMS reason.
  RequestMalformedError: -32602,
};

// sdkErrorCode is the code of the SDK's typed error err (or its cause).
export function sdkErrorCode(err) {
  for (const e of [err, err?.cause]) {
    const name = e?.name && SDK_CODES[e.name] ? e.name : e?.constructor?.name?.replace(/^(Rest|Grpc)/, '');
    if (SDK_CODES[name] !== undefined) return SDK_CODES[name];
  }
  return undefined;
}

export function restCodeOf(err) {
  return sdkErrorCode(err) ?? codeFromMessage(err?.message);
}

// RpcError is what adapters throw for a JSON-RPC error the SDK surfaced.
export class RpcError extends Error {
  constructor(code, message) {
    super(`JSON-RPC error ${code}: ${message}`);
    this.code = code;
  }
}

// expectRpcError runs fn and asserts it fails with one of the codes.
export async function expectRpcError(fn, codes, codeOf) {
  const wanted = [codes].flat();
  let result;
  try {
    result = await fn();
  } catch (err) {
    const code = codeOf(err);
    assert.ok(
      wanted.includes(code),
      `expected JSON-RPC error ${wanted.join(' or ')}, got ${code === undefined ? 'an error without a code' : code}: ${err.message}`,
    );
    return err;
  }
  assert.fail(`expected JSON-RPC error ${wanted.join(' or ')}, got success: ${JSON.stringify(result)?.slice(0, 300)}`);
}

// codeFromMessage digs the code out of the SDKs' "... (Code: -32001) ..."
// error strings, which is all some of them keep for streaming errors.
export function codeFromMessage(message) {
  const match = /\(Code: (-?\d+)/.exec(message ?? '');
  return match ? Number(match[1]) : undefined;
}

// collect drains an async iterable into an array.
export async function collect(iterable) {
  const events = [];
  for await (const event of iterable) {
    events.push(event);
  }
  return events;
}

// poll calls fn until accept(result) holds, with a deadline; it is only
// used against the real processes under test.
export async function poll(fn, accept, { timeoutMs = 10000, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await fn();
    if (accept(last)) {
      return last;
    }
    if (Date.now() > deadline) {
      assert.fail(`${what} not reached before deadline; last value: ${JSON.stringify(last)?.slice(0, 400)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// FetchRecorder wraps globalThis.fetch (all three SDK versions call the
// global fetch) and remembers every URL requested and every JSON-RPC
// payload received, including each SSE data line.
export class FetchRecorder {
  urls = [];
  payloads = [];

  #pending = new Set();

  install() {
    const original = globalThis.fetch;
    globalThis.fetch = async (input, init) => {
      const url = typeof input === 'string' ? input : input.url ?? String(input);
      this.urls.push(url);
      const response = await original(input, init);
      const capture = this.#capture(response.clone());
      this.#pending.add(capture);
      capture.finally(() => this.#pending.delete(capture));
      return response;
    };
  }

  reset() {
    this.urls = [];
    this.payloads = [];
  }

  // settled waits for the captures of bodies the scenario already read.
  async settled() {
    await Promise.race([
      Promise.allSettled([...this.#pending]),
      new Promise((resolve) => setTimeout(resolve, 1000)),
    ]);
  }

  async #capture(response) {
    try {
      const body = await response.text();
      if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        for (const line of body.split('\n')) {
          if (line.startsWith('data:')) {
            this.payloads.push(JSON.parse(line.slice(5)));
          }
        }
      } else if (body) {
        this.payloads.push(JSON.parse(body));
      }
    } catch {
      // Non-JSON bodies are asserted by the scenarios that expect them.
    }
  }
}

export class Harness {
  #scenarios = [];
  #args;
  #recorder;
  #dialect;
  // skip names why a scenario cannot run over the client's transport
  // ('' runs it); a skipped scenario prints a SKIP line run.sh ignores.
  skip = () => '';

  // dialect is the client's own dialect; every payload it receives is
  // checked against that dialect's wire shapes.
  constructor(args, recorder, dialect) {
    this.#args = args;
    this.#recorder = recorder;
    this.#dialect = dialect;
  }

  scenario(name, fn) {
    this.#scenarios.push({ name, fn });
  }

  // run executes the scenarios in order, prints one line each and returns
  // the number of failures.
  async run() {
    const { client, backend, tag, only, timeoutMs, url } = this.#args;
    const origin = new URL(url).origin;
    let failures = 0;
    for (const { name, fn } of this.#scenarios) {
      if (only.size > 0 && !only.has(name)) {
        continue;
      }
      const label = `client=${client} backend=${backend}${tag ? ` ${tag}` : ''} scenario=${name}`;
      const skipped = this.skip(name);
      if (skipped) {
        console.log(`SKIP ${label} ${skipped}`);
        continue;
      }
      this.#recorder.reset();
      try {
        await withTimeout(fn(), timeoutMs, name);
        const foreign = this.#recorder.urls.filter((u) => new URL(u).origin !== origin);
        assert.deepEqual(foreign, [], `requests left ${origin}`);
        await this.#recorder.settled();
        checkPayloads(this.#dialect, this.#recorder.payloads);
        console.log(`PASS ${label}`);
      } catch (err) {
        failures++;
        console.log(`FAIL ${label} ${oneLine(err)}`);
      }
    }
    return failures;
  }
}

function withTimeout(promise, ms, name) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`scenario ${name} timed out after ${ms}ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function oneLine(err) {
  let text = err?.message ?? String(err);
  if (err instanceof assert.AssertionError && ['deepStrictEqual', 'strictEqual'].includes(err.operator)) {
    text = `${text.split('\n')[0]}: got ${JSON.stringify(err.actual)}, want ${JSON.stringify(err.expected)}`;
  }
  if (process.env.INTEROP_STACKS && err?.stack) text += ` ${err.stack}`;
  return text.replace(/\s+/g, ' ').slice(0, 1500);
}
