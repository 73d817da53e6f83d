import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOG, GatewayError, gatewayError, type ErrorCode } from '../../core/errors.js';
import { toApiErrorProto } from '../../core/grpc/api-error.js';
import { GATE_PROTO_PATH } from '../../proto/src/index.js';

/** The enum as protoc sees it, read from gate.proto rather than from the gateway's own table. */
const simpleStatus = new protobuf.Root().loadSync(GATE_PROTO_PATH, { keepCase: true }).lookupEnum('com.platform.gate.SimpleStatusProto');
const nameOf = (status: number) => Object.entries(simpleStatus.values).find(([, value]) => value === status)?.[0];

describe('ApiErrorProto of the gateway errors', () => {
  it.each(Object.keys(ERROR_CATALOG) as ErrorCode[])('%s carries statusCode and the SimpleStatusProto status', (code) => {
    const err = gatewayError(code);
    const proto = toApiErrorProto(err);
    expect(proto.statusCode).toBe(err.status);
    expect(nameOf(err.status), `status ${err.status} has an enum value`).toBeDefined();
    expect(proto.status).toBe(nameOf(err.status));
  });

  it('leaves status unset for a status without an enum value, rather than OK', () => {
    const odd = new GatewayError({ code: 'X', status: 599, type: 'api_error', message: 'odd', args: {}, grpcCode: 'x' });
    const proto = toApiErrorProto(odd);
    expect(proto).toMatchObject({ statusCode: 599 });
    expect(proto.status).toBeUndefined();
  });
});
