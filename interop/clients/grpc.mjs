// What the JS clients need of their SDK's gRPC transport beyond the SDK
// itself: the target it dialed, and the A2A error code of a failed call.

import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { codeFromMessage, sdkErrorCode } from './harness.mjs';

// grpcTarget is the target the SDK's gRPC transport dialed: the URL of
// the card's GRPC interface as grpc-js holds it (without the "dns:"
// scheme it adds to a bare host:port). Both SDKs keep their grpc-js client
// in the transport's grpcClient field.
export function grpcTarget(transport) {
  const client = transport?.grpcClient ?? transport?.base?.grpcClient;
  const target = client?.getChannel().getTarget();
  return target?.replace(/^dns:/, '');
}

// REASON_CODES are the JSON-RPC codes of the A2A errors by the reason of
// their google.rpc.ErrorInfo (the spec's error table, and the SDKs'
// reasons for the JSON-RPC codes it names none for), as in the Go
// harness's ReasonCodes.
const REASON_CODES = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  TASK_NOT_FOUND: -32001,
  TASK_NOT_CANCELABLE: -32002,
  PUSH_NOTIFICATION_NOT_SUPPORTED: -32003,
  UNSUPPORTED_OPERATION: -32004,
  CONTENT_TYPE_NOT_SUPPORTED: -32005,
  INVALID_AGENT_RESPONSE: -32006,
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: -32007,
  EXTENSION_SUPPORT_REQUIRED: -32008,
  VERSION_NOT_SUPPORTED: -32009,
};

// STATUS_10 is the gRPC status code of each A2A error in the 1.0 binding
// (a2a.proto v1.0.1 and the spec's error mapping; -32601, which the spec
// leaves open, is UNIMPLEMENTED as grpc itself answers an unknown method).
// A caller that reads only the status code relies on it.
export const STATUS_10 = {
  [-32601]: 12,
  [-32602]: 3,
  [-32603]: 13,
  [-32001]: 5,
  [-32002]: 9,
  [-32003]: 9,
  [-32004]: 9,
  [-32005]: 3,
  [-32006]: 13,
  [-32007]: 9,
  [-32008]: 9,
  [-32009]: 9,
};

// grpcCodeOf reads the A2A code of a gRPC call's error: the typed error
// the SDK made of it (@a2a-js/sdk 1.x fromGrpcError from the ErrorInfo
// reason, 0.3.x GrpcTransport.mapToError from the status code and method),
// else the reason of the status's ErrorInfo detail, as an application
// reads it. With statusOf (the binding's status table) a status code other
// than the table's for that error is reported instead of the code.
export function grpcCodeOf(err, statusOf) {
  const failure = [err, err?.cause].find((e) => e?.statusDetailsBin || e?.metadata?.get);
  const status = err?.status ?? err?.cause?.code;
  const bin = failure?.statusDetailsBin ?? failure?.metadata?.get('grpc-status-details-bin')?.[0];
  const code = sdkErrorCode(err) ?? REASON_CODES[bin ? errorInfoReason(bin) : undefined] ?? codeFromMessage(err?.message);
  const want = statusOf?.[code];
  if (code !== undefined && want !== undefined && typeof status === 'number' && status !== want) {
    return `${code} with gRPC status ${status} (the binding's status for it is ${want})`;
  }
  return code;
}

// errorInfoReason is the reason of the first google.rpc.ErrorInfo among
// the details of a serialized google.rpc.Status (field 3, repeated Any:
// type_url 1, value 2; ErrorInfo.reason is field 1).
export function errorInfoReason(statusBytes) {
  for (const [no, any] of fields(statusBytes)) {
    if (no !== 3) continue;
    const parts = Object.fromEntries(fields(any));
    if (new TextDecoder().decode(parts[1]).endsWith('/google.rpc.ErrorInfo')) {
      const info = Object.fromEntries(fields(parts[2] ?? new Uint8Array()));
      return info[1] ? new TextDecoder().decode(info[1]) : undefined;
    }
  }
  return undefined;
}

// fields yields [field number, bytes] of each length-delimited field of a
// serialized message, skipping the others.
function* fields(bytes) {
  const reader = new BinaryReader(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes));
  while (reader.pos < reader.len) {
    const [no, wireType] = reader.tag();
    if (wireType === WireType.LengthDelimited) yield [no, reader.bytes()];
    else reader.skip(wireType);
  }
}
