/**
 * Issue 25 (hostile tenants): a refused call must not outlive its answer. A large message refused from
 * its head (ext params over their bounds, a missing key) is answered, and its stream reset with
 * NO_ERROR while paused, so that its sender stops. Node destroys a stream reset with NO_ERROR only
 * once its readable side has ended, and a paused stream with bytes unread never ends: each refused
 * call stayed in the gateway, with the bytes it had received, until its sender closed the connection.
 * Found 2026-11-27 with the hostile bench's flood (4 loops, 40 s): the gateway's Buffers grew 50 KB a
 * refused call and no collection freed them; here ten refused floods left ten streams, and so did ten
 * keyless calls, which anyone can send on one connection for as long as they like.
 *
 * The count is of Node's HTTP/2 stream handles in this process (async_hooks), which the in-process
 * gateway and this test's client share: the client's streams end with their calls, so what is left
 * over the count before is the gateway's.
 */
import { createHook } from 'node:async_hooks';
import type { ClientHttp2Session } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateServiceDefinition, type ClientResponseProto } from '../../proto/src/index.js';
import { ECHO_TOKEN, TEST_KEY, eventually, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { wireCall, wireSession } from '../support/grpc-wire.js';
import { RawServiceStream, rawClient, type RawClient } from '../support/raw-gate-client.js';

const definition = gateServiceDefinition();
const PROCESS = definition.process!.path;
const serialize = (m: object) => definition.process!.requestSerialize(m) as Buffer;
const inBand = (bytes: Buffer) => definition.process!.responseDeserialize(bytes) as ClientResponseProto;
const CALLS = 10;

const liveStreams = new Set<number>();
const streamHandles = createHook({
  init: (id, type) => {
    if (type === 'HTTP2STREAM') liveStreams.add(id);
  },
  destroy: (id) => {
    liveStreams.delete(id);
  },
});

describe('a refused large call leaves nothing behind once answered (#25)', () => {
  let gw: TestGateway;
  let client: RawClient;
  let service: RawServiceStream;
  let wire: ClientHttp2Session;

  beforeAll(async () => {
    streamHandles.enable();
    gw = await startTestGateway(testConfigInput({ plugins: { enabled: ['sync-predict'] } }));
    client = rawClient(gw.grpcAddress);
    service = new RawServiceStream(client);
    service.startServing(ECHO_TOKEN, 'echo');
    await service.next((m) => m.body === 'serviceInfo');
    wire = wireSession(gw.grpcAddress);
  });

  afterAll(async () => {
    streamHandles.disable();
    wire?.close();
    service?.close();
    client?.close();
    await gw?.close();
  });

  /**
   * `CALLS` calls, one after another on one connection, each announcing `announce` bytes and sending
   * `head` and filler up to 64 KiB (more than the gateway reads before it decides); their outcomes.
   */
  const refusedCalls = async (head: Buffer, announce: number) => {
    const outcomes = [];
    for (let i = 0; i < CALLS; i++) outcomes.push(await wireCall(wire, PROCESS, head, { announce, partial: 64 * 1024 }));
    return outcomes;
  };

  it('ext floods refused with EXT_PARAMS_TOO_LARGE: no stream stays', async () => {
    const flood = serialize({
      account: 'demo',
      model: 'echo',
      authToken: TEST_KEY,
      ext: {
        methodName: 'ping',
        params: Object.fromEntries(Array.from({ length: 300_000 }, (_, i) => [`p${i.toString(36).padStart(5, '0')}`, {}])),
      },
    });
    const before = liveStreams.size;
    const outcomes = await refusedCalls(flood.subarray(0, 64 * 1024), flood.length);
    for (const outcome of outcomes) expect(inBand(outcome.messages[0]!).error).toMatchObject({ code: 'EXT_PARAMS_TOO_LARGE' });
    // Before: ten streams more, until the connection closed.
    await eventually(() => liveStreams.size <= before, 5000, `the refused calls' streams to end (${liveStreams.size} of ${before})`);
  }, 60_000);

  it('keyless large messages refused with API_KEY_MISSING: no stream stays', async () => {
    const keyless = serialize({ account: 'demo', model: 'echo', ext: { methodName: 'ping', params: { k: { json: 'v' } } } });
    const before = liveStreams.size;
    // Large enough to be decided from its head; the answer waits as long as its rest would take at
    // the unauthenticated rate (2 MiB/s): a tenth of a second.
    const outcomes = await refusedCalls(keyless, 256 * 1024);
    for (const outcome of outcomes) expect(outcome.details).toMatch(/API_KEY_MISSING/);
    // Before: ten streams more.
    await eventually(() => liveStreams.size <= before, 5000, `the refused calls' streams to end (${liveStreams.size} of ${before})`);
    // The connection still carries a keyed call to its answer (an in-band refusal, no service needed).
    const keyed = serialize({ account: 'demo', model: 'no-such-model', authToken: TEST_KEY, ext: { methodName: 'ping' } });
    const answer = await wireCall(wire, PROCESS, keyed);
    expect(inBand(answer.messages[0]!).error).toMatchObject({ code: 'SERVICE_NOT_FOUND' });
  }, 60_000);
});
