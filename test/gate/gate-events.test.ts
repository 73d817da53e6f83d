import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ECHO_TOKEN, TEST_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { RawServiceStream, json, processUnary, rawClient, type RawClient } from '../support/raw-gate-client.js';

/** What the Gate tells waiters (instances arriving, calls drained) instead of being polled. */
describe('Gate events', () => {
  let gw: TestGateway;
  let client: RawClient;
  const streams: RawServiceStream[] = [];
  const connect = async (boot: string) => {
    const s = new RawServiceStream(client);
    streams.push(s);
    s.startServing(ECHO_TOKEN, boot);
    await s.next((m) => m.body === 'serviceInfo');
    return s;
  };

  beforeEach(async () => {
    gw = await startTestGateway(testConfigInput({ gate: { heartbeatIntervalMs: 200, defaultTimeoutSec: 10, drainTimeoutMs: 120_000 } }));
    client = rawClient(gw.grpcAddress);
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    client.close();
    await gw.close();
  });

  it('onInstance tells listeners the service ID when an instance starts serving; unsubscribing stops it', async () => {
    const seen: number[] = [];
    const stop = gw.gateway.gate.onInstance((id) => seen.push(id));
    await connect('first');
    expect(seen).toEqual([10]);
    stop();
    await connect('second');
    expect(seen).toEqual([10]);
  });

  it('whenInstance resolves true when an instance connects, at once when one is there, false on timeout or abort', async () => {
    const { gate } = gw.gateway;
    expect(await gate.whenInstance(10, 50)).toBe(false);
    const aborted = new AbortController();
    const stopped = gate.whenInstance(10, 30_000, aborted.signal);
    aborted.abort();
    expect(await stopped).toBe(false);
    const waiting = gate.whenInstance(10, 30_000);
    await connect('arrives');
    expect(await waiting).toBe(true);
    expect(await gate.whenInstance(10, 0)).toBe(true);
  });

  it('shutdown ends as soon as the last call in flight is answered, well before the drain time', async () => {
    const service = await connect('draining');
    const pending = processUnary(client, { account: 'demo', model: 'echo', authToken: TEST_KEY, predict: { data: json({ q: 1 }) } });
    const request = await service.next((m) => m.body === 'predict');
    let shutDown = false;
    const shutdown = gw.gateway.gate.shutdown().then(() => (shutDown = true));
    await service.next((m) => m.body === 'stopServing');
    expect(shutDown).toBe(false); // it waits for the call
    service.send({ requestId: request.requestId, predict: { data: json('answered') } });
    expect(JSON.parse((await pending).predict!.data!.json!)).toBe('answered');
    await shutdown; // the drain time is 120 s (beyond the test timeout): this returns because the call settled, not by timing out
    expect(shutDown).toBe(true);
  });
});
