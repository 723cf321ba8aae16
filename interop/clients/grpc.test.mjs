// Self-test of the gRPC error reading (node --test clients/): the code comes
// from the SDK's typed error or the status's ErrorInfo, and a status code
// other than the binding's for that error is reported, not passed.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { errorInfoReason, grpcCodeOf, STATUS_10 } from './grpc.mjs';

// statusBytes serializes a google.rpc.Status whose details are an Empty
// and then an ErrorInfo of the reason, as a server may order them.
function statusBytes(code, reason) {
  const info = new BinaryWriter().uint32(10).string(reason).uint32(18).string('a2a-protocol.org').finish();
  const any = (type, value) => new BinaryWriter().uint32(10).string(`type.googleapis.com/${type}`).uint32(18).bytes(value).finish();
  return new BinaryWriter()
    .uint32(8).int32(code)
    .uint32(18).string('boom')
    .uint32(26).bytes(any('google.protobuf.Empty', new Uint8Array()))
    .uint32(26).bytes(any('google.rpc.ErrorInfo', info))
    .finish();
}

// serviceError is what grpc-js rejects a call with.
function serviceError(code, reason) {
  const bin = Buffer.from(statusBytes(code, reason));
  return { code, details: 'boom', metadata: { get: (key) => (key === 'grpc-status-details-bin' ? [bin] : []) } };
}

test('errorInfoReason finds the ErrorInfo among the details', () => {
  assert.equal(errorInfoReason(statusBytes(9, 'TASK_NOT_CANCELABLE')), 'TASK_NOT_CANCELABLE');
  assert.equal(errorInfoReason(new BinaryWriter().uint32(8).int32(13).finish()), undefined);
});

test('a typed error of the SDK gives its code', () => {
  class TaskNotFoundError extends Error {}
  assert.equal(grpcCodeOf(new TaskNotFoundError('x')), -32001);
  assert.equal(grpcCodeOf(Object.assign(new Error('x'), { name: 'TaskNotFoundError', status: 5 }), STATUS_10), -32001);
});

test('an untyped error gives the code of its ErrorInfo reason', () => {
  // @a2a-js/sdk 0.3.x: a plain Error with the grpc-js ServiceError as cause.
  assert.equal(grpcCodeOf(new Error('GRPC error', { cause: serviceError(9, 'UNSUPPORTED_OPERATION') })), -32004);
  // @a2a-js/sdk 1.x: an A2AError with status and statusDetailsBin.
  const untyped = Object.assign(new Error('x'), { name: 'A2AError', status: 12, statusDetailsBin: Buffer.from(statusBytes(12, 'METHOD_NOT_FOUND')) });
  assert.equal(grpcCodeOf(untyped, STATUS_10), -32601);
});

test('a status code other than the binding\'s is reported', () => {
  const typed = Object.assign(new Error('x'), { name: 'TaskNotFoundError', status: 13 });
  assert.match(String(grpcCodeOf(typed, STATUS_10)), /-32001 with gRPC status 13 .*is 5/);
  const untyped = new Error('GRPC error', { cause: serviceError(13, 'TASK_NOT_CANCELABLE') });
  assert.match(String(grpcCodeOf(untyped, STATUS_10)), /-32002 with gRPC status 13/);
  // Without a table (0.3: the SDK maps by status code itself) the code stands.
  assert.equal(grpcCodeOf(untyped), -32002);
});
