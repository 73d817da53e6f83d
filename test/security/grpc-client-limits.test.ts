import type { ClientHttp2Session } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientResponseProto } from '../../proto/src/index.js';
import { gateServiceDefinition } from '../../proto/src/index.js';
import { narrowed } from '../../core/grpc/receive-limits.js';
import { ECHO_TOKEN, TEST_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { wireCall, wireSession } from '../support/grpc-wire.js';
import { peakGrowth } from '../support/memory-watch.js';
import { RawServiceStream, json, processUnary, rawClient, type RawClient } from '../support/raw-gate-client.js';

const MiB = 2 ** 20;
const definition = gateServiceDefinition();
const PROCESS = definition.process!.path;
const PROCESS_ASYNC = definition.processAsync!.path;
const serialize = (m: object) => definition.process!.requestSerialize(m) as Buffer;
const inBand = (bytes: Buffer) => definition.process!.responseDeserialize(bytes) as ClientResponseProto;

/** One `headers` entry on the wire: field 1000 (tag C2 3E), 3 bytes: key 'a', no value. */
const HEADER_ENTRY = Buffer.from([0xc2, 0x3e, 0x03, 0x0a, 0x01, 0x61]);

describe('gRPC client calls under hostile traffic', () => {
  let gw: TestGateway;
  let client: RawClient;
  let service: RawServiceStream;
  let wire: ClientHttp2Session;

  beforeAll(async () => {
    gw = await startTestGateway(testConfigInput({ gate: { heartbeatIntervalMs: 200, defaultTimeoutSec: 10, registrationTimeoutMs: 500 } }));
    client = rawClient(gw.grpcAddress);
    service = new RawServiceStream(client);
    service.startServing(ECHO_TOKEN, 'echo');
    service.call.on('data', (m: any) => {
      if (m.body !== 'predict') return;
      const asked = JSON.parse(m.predict.data.json) as { big?: number };
      // `big`: an answer larger than the registration and client limits, to show the service limit applies.
      const data = asked.big ? json('x'.repeat(asked.big)) : json({ ok: true });
      service.send({ requestId: m.requestId, predict: { data } });
    });
    await service.next((m) => m.body === 'serviceInfo');
    wire = wireSession(gw.grpcAddress);
  });

  afterAll(async () => {
    wire?.close();
    service?.close();
    client?.close();
    await gw?.close();
  });

  const served = async () => {
    const res = await processUnary(client, { account: 'demo', model: 'echo', authToken: TEST_KEY, predict: { data: json({}) } });
    expect(res.error).toBeUndefined();
    expect(JSON.parse(res.predict!.data!.json!)).toEqual({ ok: true });
  };

  it('refuses client messages over the client limit from their length prefix, without reading them', async () => {
    // The attack of #15 item 1: eight unauthenticated 100 MiB messages (before: +1.35 GB).
    const { result, rssMiB } = await peakGrowth(() =>
      Promise.all(Array.from({ length: 8 }, () => wireCall(wire, PROCESS, Buffer.alloc(0), { announce: 100 * MiB }))),
    );
    expect(narrowed).toBe(true);
    for (const outcome of result) {
      expect(outcome.status).toBe(8); // RESOURCE_EXHAUSTED
      expect(outcome.details).toMatch(/^MESSAGE_TOO_LARGE: gRPC message of 104857600 bytes exceeds the limit of 4194304 bytes/);
    }
    expect(rssMiB).toBeLessThan(64);
    await served();
  });

  it('refuses a message with too many headers before decoding it (HEADERS_TOO_LARGE, in-band)', async () => {
    // With a good key: a large message without one is refused from its head (the next test).
    const request = Buffer.concat([
      serialize({ account: 'demo', model: 'echo', authToken: TEST_KEY, predict: { data: json({}) } }),
      Buffer.concat(Array(600_000).fill(HEADER_ENTRY)),
    ]);
    expect(request.length).toBeLessThan(4 * MiB);
    const outcome = await wireCall(wire, PROCESS, request);
    expect(outcome.status).toBe(0);
    const error = inBand(outcome.messages[0]!).error!;
    expect(error.code).toBe('HEADERS_TOO_LARGE');
    expect(error.statusCode).toBe(431);
    await served();
  });

  it('checks the key of a message as large as the limit allows from its first bytes: refused before the rest is received', async () => {
    const request = serialize({ account: 'demo', model: 'echo', headers: { a: 'b' }, predict: { data: json('x'.repeat(4 * MiB - 200)) } });
    expect(request.length).toBeLessThanOrEqual(4 * MiB);
    // Only the first 64 KiB are sent, and the message is never finished: the refusal cannot wait for it.
    const missing = await wireCall(wire, PROCESS, request.subarray(0, 64 * 1024), { announce: request.length, partial: 64 * 1024 });
    expect(missing.status).toBe(16); // UNAUTHENTICATED
    expect(missing.details).toMatch(/^API_KEY_MISSING: /);
    const large = serialize({ account: 'demo', model: 'echo', authToken: 'not-a-key', predict: { data: json('x'.repeat(MiB)) } });
    const wrongLarge = await wireCall(wire, PROCESS, large.subarray(0, 64 * 1024), { announce: large.length, partial: 64 * 1024 });
    expect(wrongLarge.status).toBe(16);
    expect(wrongLarge.details).toMatch(/^API_KEY_INVALID: /);
    // A small message takes the ordinary path: received whole, answered in-band.
    const wrong = await wireCall(
      wire,
      PROCESS,
      serialize({ account: 'demo', model: 'echo', authToken: 'not-a-key', predict: { data: json({}) } }),
    );
    expect(inBand(wrong.messages[0]!).error!.code).toBe('API_KEY_INVALID');
    await served();
  });

  it('keeps the large limit for registered service streams', async () => {
    const res = await processUnary(client, {
      account: 'demo',
      model: 'echo',
      authToken: TEST_KEY,
      predict: { data: json({ big: 6 * MiB }) },
    });
    expect(res.error).toBeUndefined();
    expect(res.predict!.data!.json!.length).toBe(6 * MiB + 2);
  });

  it('refuses a large first processAsync message (before startServing) from its length prefix', async () => {
    const { result, rssMiB } = await peakGrowth(() =>
      Promise.all(Array.from({ length: 8 }, () => wireCall(wire, PROCESS_ASYNC, Buffer.alloc(0), { announce: 100 * MiB }))),
    );
    for (const outcome of result) {
      expect(outcome.status).toBe(8);
      expect(outcome.details).toMatch(/^MESSAGE_TOO_LARGE: gRPC message of 104857600 bytes exceeds the limit of 65536 bytes/);
    }
    expect(rssMiB).toBeLessThan(64);
  });

  it('closes processAsync streams that do not register in time (START_SERVING_TIMEOUT)', async () => {
    const idle = Array.from({ length: 200 }, () => new RawServiceStream(client));
    await Promise.all(idle.map((s) => s.untilEnded(5000)));
    for (const s of idle) expect(s.received.some((m) => m.error?.code === 'platform.gate.start_serving_timeout')).toBe(true);
    await served();
  });
});
