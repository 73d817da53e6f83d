import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { CLIENT_ERROR_CODES, GATE_PROTO_PATH, ServiceErrorCodes, simpleStatusOf, statusOfSimpleStatus } from '../../proto/src/index.js';

describe('protocol tables read from gate.proto', () => {
  const values = protobuf.loadSync(GATE_PROTO_PATH).lookupEnum('com.platform.gate.SimpleStatusProto').values;

  it('maps every SimpleStatusProto name to its number and back', () => {
    expect(Object.keys(values).length).toBeGreaterThan(40);
    for (const [name, number] of Object.entries(values)) {
      expect(statusOfSimpleStatus(name)).toBe(number);
      expect(simpleStatusOf(number)).toBe(name);
    }
  });

  it('knows no status for names and numbers outside the enum', () => {
    expect(statusOfSimpleStatus('NOT_A_STATUS')).toBeUndefined();
    expect(statusOfSimpleStatus(undefined)).toBeUndefined();
    expect(simpleStatusOf(299)).toBeUndefined();
  });

  it('names the client-error codes among the service error codes', () => {
    expect([...CLIENT_ERROR_CODES].every((code) => Object.values(ServiceErrorCodes).includes(code as never))).toBe(true);
    expect(CLIENT_ERROR_CODES.has(ServiceErrorCodes.badRequest)).toBe(true);
    expect(CLIENT_ERROR_CODES.has(ServiceErrorCodes.processingException)).toBe(false);
  });
});
