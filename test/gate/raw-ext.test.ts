import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateServiceDefinition, type GateToServiceProto } from '../../proto/src/index.js';
import { ECHO_TOKEN, TEST_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { wireCall, wireSession } from '../support/grpc-wire.js';
import { rawExtInPieces } from '../../core/grpc/raw-ext-writes.js';
import { RawServiceStream, json, processUnary, rawClient, type RawClient } from '../support/raw-gate-client.js';

const definition = gateServiceDefinition();

/**
 * A large ext call's params reach the service as the caller sent them, without the gateway decoding
 * and encoding them (core/grpc/raw-ext.ts: the largest map the limits allow cost 8.4 ms of CPU to
 * decode and encode, in one piece on the event loop; issue 25's hostile bench sends it back to back). The service, a real gRPC client decoding the message, must see exactly what a
 * decoded and re-encoded message would have said; and a map with anything a strict decoder would
 * refuse (a string that is not UTF-8) still takes the decoding path, which writes a clean message.
 */
describe('large ext params travel to the service as sent (#25)', () => {
  let gw: TestGateway;
  let client: RawClient;
  let service: RawServiceStream;
  const seen: GateToServiceProto[] = [];

  beforeAll(async () => {
    gw = await startTestGateway(
      testConfigInput({ limits: { inputBytesPerSecondPerAccount: 1024 * 1024 * 1024 }, plugins: { enabled: [] } }),
    );
    client = rawClient(gw.grpcAddress);
    service = new RawServiceStream(client);
    service.startServing(ECHO_TOKEN, 'echo');
    service.call.on('data', (m: GateToServiceProto) => {
      if (m.body !== 'ext') return;
      seen.push(m);
      service.send({ requestId: m.requestId, ext: { data: json({ ok: true }) } });
    });
    await service.next((m) => m.body === 'serviceInfo');
  });

  afterAll(async () => {
    service?.close();
    client?.close();
    await gw?.close();
  });

  it('keys, json and bytes values and data types arrive as sent, with the headers the gateway sets', async () => {
    const params: Record<string, { json?: string; protobuf?: Buffer; dataType?: string }> = {};
    for (let i = 0; i < 200; i++) {
      params[`k${i}-é`] =
        i % 2
          ? { json: JSON.stringify({ i, text: 'ü'.repeat(500) }), dataType: 'application/json' }
          : { protobuf: Buffer.alloc(600, i), dataType: 'bin' };
    }
    seen.length = 0;
    const answer = await processUnary(client, {
      account: 'demo',
      model: 'echo',
      authToken: TEST_KEY,
      headers: { 'x-mine': 'yes' },
      ext: { methodName: 'bulk', params },
    });
    expect(answer.error).toBeUndefined();
    const ext = seen[0]!.ext!;
    expect(ext.methodName).toBe('bulk');
    expect(Object.keys(ext.params!).sort()).toEqual(Object.keys(params).sort());
    for (const [key, value] of Object.entries(params)) {
      const got = ext.params![key]!;
      if (value.json !== undefined) expect(got.json).toBe(value.json);
      else expect(Buffer.from(got.protobuf!)).toEqual(value.protobuf);
      expect(got.dataType).toBe(value.dataType);
    }
    // The rest of the message is the gateway's as for any call: its request ID and the caller's header.
    expect(seen[0]!.headers!['Z-requestId']).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[0]!.headers!['x-mine']).toBe('yes');
  });

  it('goes out in pieces (the caller bytes written as they are), and calls at once keep every message whole', async () => {
    // The two writes of one message must never have another message between them: large and small
    // ext calls at once, each with params of its own, each arrive exactly as sent.
    expect(rawExtInPieces).toBe(true);
    const paramsOf = (call: number, large: boolean) =>
      Object.fromEntries(
        Array.from({ length: large ? 100 : 2 }, (_, i) => [`c${call}-${i}`, { json: String(call).repeat(large ? 4000 : 10) }]),
      );
    const calls = Array.from({ length: 16 }, (_, call) => ({ call, params: paramsOf(call, call % 2 === 0) }));
    seen.length = 0;
    const answers = await Promise.all(
      calls.map(({ call, params }) =>
        processUnary(client, { account: 'demo', model: 'echo', authToken: TEST_KEY, ext: { methodName: `m${call}`, params } }),
      ),
    );
    expect(answers.map((a) => a.error)).toEqual(calls.map(() => undefined));
    expect(seen).toHaveLength(calls.length);
    for (const { call, params } of calls) {
      const got = seen.find((m) => m.ext?.methodName === `m${call}`)!.ext!.params!;
      expect(Object.fromEntries(Object.entries(got).map(([key, value]) => [key, { json: value.json }]))).toEqual(params);
    }
  });

  it('a map with a string that is not UTF-8 is decoded and written clean, as before', async () => {
    const message = definition.process!.requestSerialize({
      account: 'demo',
      model: 'echo',
      authToken: TEST_KEY,
      ext: { methodName: 'bulk', params: { a: { json: 'v'.repeat(100_000) } } },
    }) as Buffer;
    // One byte of the long string made invalid: Python's and Java's decoders refuse such a message.
    message[message.length - 50] = 0xff;
    seen.length = 0;
    const outcome = await wireCall(wireSession(gw.grpcAddress), definition.process!.path, message);
    expect(outcome.status).toBe(0);
    const json = seen[0]!.ext!.params!.a!.json!;
    expect(json).toHaveLength(100_000);
    expect(json).toContain('\ufffd');
  });
});
