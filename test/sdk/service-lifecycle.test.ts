import { afterEach, describe, expect, it } from 'vitest';
import { ModelService, PROCESS_INSTANCE_UUID, type GateConnectionError } from '../../sdk/index.js';
import { HarnessGate, eventually, sleep } from './support/harness-gate.js';
import { startService } from './support/service.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function gate(options: Parameters<typeof HarnessGate.start>[0] = {}): Promise<HarnessGate> {
  const g = await HarnessGate.start(options);
  cleanup.push(() => g.close());
  return g;
}

function service(...args: Parameters<typeof startService>): ModelService {
  const s = startService(...args);
  cleanup.push(() => s.stop());
  return s;
}

describe('model service: connecting', () => {
  it('calls healthCheck, then opens processAsync with startServing first', async () => {
    const g = await gate();
    service(
      g,
      {},
      { descriptor: { name: 'echo', methods: { predict: { output: { type: 'Out' } } } }, hostname: 'h1', version: 3, image: 'img:1' },
    );
    const stream = await g.stream(0);
    const first = await stream.waitFor(() => true);
    expect(g.healthChecks).toBeGreaterThanOrEqual(1);
    expect(first.body).toBe('startServing');
    expect(first.startServing).toMatchObject({
      connectionToken: 'test-token',
      hostname: 'h1',
      version: 3,
      image: 'img:1',
      instanceBootUuid: PROCESS_INSTANCE_UUID,
      serviceDescriptor: { name: 'echo', fittable: false, methods: { predict: { output: { type: 'Out' } } } },
    });
  });

  it('does not open a stream while healthCheck answers something other than "Ok"', async () => {
    const g = await gate({ healthStatus: 'Starting' });
    service(g, {});
    await eventually(() => g.healthChecks >= 2, 5000, 'a second healthCheck');
    expect(g.streams).toHaveLength(0);
    g.healthStatus = 'Ok';
    const stream = await g.stream(0);
    expect((await stream.waitFor(() => true)).body).toBe('startServing');
  });

  it('reconnects after the gate ends the stream, with startServing first and the same instanceBootUuid', async () => {
    const g = await gate({ heartbeatInterval: 100 });
    service(g, {});
    const first = await g.stream(0);
    const start1 = await first.waitFor((m) => m.body === 'startServing');
    first.end();
    const second = await g.stream(1);
    const firstOfSecond = await second.waitFor(() => true);
    expect(firstOfSecond.body).toBe('startServing');
    expect(firstOfSecond.startServing?.instanceBootUuid).toBe(start1.startServing?.instanceBootUuid);
    expect(firstOfSecond.startServing?.instanceBootUuid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('reconnects after the stream ends with an error status', async () => {
    const g = await gate({ heartbeatInterval: 100 });
    const s = service(g, {});
    const first = await g.stream(0);
    await first.waitFor((m) => m.body === 'startServing');
    const reasons: string[] = [];
    s.on('disconnected', (_gw, reason) => reasons.push(reason));
    first.fail();
    const second = await g.stream(1);
    expect((await second.waitFor(() => true)).body).toBe('startServing');
    expect(reasons).toEqual(['error']);
  });

  it('keeps retrying without crashing when the gateway goes away', async () => {
    const g = await gate();
    const s = service(g, {});
    await g.stream(0);
    const disconnected = new Promise<string>((resolve) => s.once('disconnected', (_gw, reason) => resolve(reason)));
    await g.close();
    expect(await disconnected).toBeTruthy();
    // Nothing listens on the port now: the service keeps retrying with backoff and does not crash.
    await sleep(300);
    expect(s.gateways()).toEqual([g.address]);
  });

  it('reads the gateway list and token from the environment', () => {
    const s = new ModelService(
      {},
      {
        descriptor: { name: 'x' },
        env: { PLATFORM_GRPC_HOSTS: 'a:1, http://b:2/ ,a:1', PLATFORM_GRPC_HOST: 'c:3', PLATFORM_SERVICE_TOKEN: 'tok' },
      },
    );
    expect(s.options.gateways).toEqual(['a:1', 'b:2']);
    expect(s.options.connectionToken).toBe('tok');
    const single = new ModelService({}, { descriptor: { name: 'x' }, env: { PLATFORM_GRPC_HOST: 'c:3', PLATFORM_SERVICE_TOKEN: 't' } });
    expect(single.options.gateways).toEqual(['c:3']);
    expect(() => new ModelService({}, { descriptor: { name: 'x' }, env: { PLATFORM_SERVICE_TOKEN: 't' } })).toThrow(/PLATFORM_GRPC_HOST/);
    expect(() => new ModelService({}, { descriptor: { name: 'x' }, env: { PLATFORM_GRPC_HOST: 'c:3' } })).toThrow(/PLATFORM_SERVICE_TOKEN/);
  });
});

describe('model service: heartbeats', () => {
  it("starts heartbeating on the gate's first heartBeat and sends empty heartbeats every interval", async () => {
    const g = await gate();
    const s = service(g, {});
    const stream = await g.stream(0);
    await stream.waitFor((m) => m.body === 'startServing');
    await sleep(200);
    expect(stream.count('heartBeat')).toBe(0); // the gate speaks first
    stream.startHeartbeats(60);
    await s.ready();
    await eventually(() => stream.count('heartBeat') >= 4, 5000, 'four heartbeats');
    const beat = stream.received.find((m) => m.body === 'heartBeat');
    expect(beat?.heartBeat).toEqual({});
    expect(beat?.requestId ?? 0).toBe(0);
  });

  it('ignores a heartBeat with interval <= 0 (no heartbeats, no busy loop)', async () => {
    const g = await gate();
    service(g, {});
    const stream = await g.stream(0);
    stream.send({ heartBeat: { status: 'Ok', interval: 0 } });
    await sleep(200);
    expect(stream.count('heartBeat')).toBe(0);
    stream.send({ heartBeat: { status: 'Ok', interval: 50 } });
    await eventually(() => stream.count('heartBeat') >= 2, 5000, 'heartbeats after a valid interval');
  });

  it('closes a silent stream after 3 × interval + grace and reconnects', async () => {
    const g = await gate();
    service(g, {}, { heartbeatGraceMs: 100 });
    const first = await g.stream(0);
    first.send({ heartBeat: { status: 'Ok', interval: 50 } }); // then silence
    expect(await first.waitClientEnd(5000)).toBe('cancelled');
    const second = await g.stream(1);
    expect((await second.waitFor(() => true)).body).toBe('startServing');
  });

  it('uses 3 × interval + 1 s by default', async () => {
    const g = await gate();
    const s = startService(g, {}, { heartbeatGraceMs: undefined });
    cleanup.push(() => s.stop());
    const first = await g.stream(0);
    first.send({ heartBeat: { status: 'Ok', interval: 50 } }); // then silence: closed after about 1150 ms
    await sleep(700);
    expect(first.open).toBe(true);
    expect(await first.waitClientEnd(5000)).toBe('cancelled');
    await g.stream(1);
  });

  it('keeps a stream whose gate keeps heartbeating', async () => {
    const g = await gate({ heartbeatInterval: 50 });
    service(g, {});
    const stream = await g.stream(0);
    await sleep(1500);
    expect(stream.open).toBe(true);
    expect(g.streams).toHaveLength(1);
  });
});

describe('model service: gate errors, stopServing and stop()', () => {
  it('treats instance_by_token_not_found as fatal: error event, rejected ready(), no reconnect', async () => {
    const g = await gate();
    const s = service(g, {});
    const errors: GateConnectionError[] = [];
    s.on('error', (e) => errors.push(e));
    const stream = await g.stream(0);
    stream.send({ error: { code: 'platform.gate.instance_by_token_not_found', message: 'unknown token' } });
    await expect(s.ready()).rejects.toMatchObject({ code: 'platform.gate.instance_by_token_not_found', gateway: g.address });
    expect(errors).toHaveLength(1);
    await stream.waitClientEnd();
    await sleep(400);
    expect(g.streams).toHaveLength(1);
    expect(s.gateways()).toEqual([]);
  });

  it('stopServing from the gate: finishes in-flight work, half-closes, then reconnects', async () => {
    const g = await gate({ heartbeatInterval: 100 });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    service(g, {
      async predict() {
        await released;
        return { ok: true };
      },
    });
    const first = await g.stream(0);
    await first.waitFor((m) => m.body === 'startServing');
    first.send({ requestId: 7, predict: { data: { json: '{}' } } });
    await sleep(50);
    first.send({ stopServing: { reason: 'gate restart' } });
    // A request arriving while draining is refused with a retryable code.
    first.send({ requestId: 8, predict: { data: { json: '{}' } } });
    const refused = await first.waitForAnswer(8);
    expect(refused.error?.code).toBe('platform-action.common.channel-closed-error');
    await sleep(100);
    expect(first.clientEnd).toBeUndefined();
    release();
    const answer = await first.waitForAnswer(7);
    expect(answer.predict?.data?.json).toBe('{"ok":true}');
    expect(await first.waitClientEnd()).toBe('half-closed');
    const second = await g.stream(1);
    expect((await second.waitFor(() => true)).body).toBe('startServing');
  });

  it('stop() sends stopServing, waits for in-flight work, half-closes and does not reconnect', async () => {
    const g = await gate({ heartbeatInterval: 100 });
    let started = false;
    const s = service(g, {
      async predict(_req, ctx) {
        started = true;
        await sleep(150);
        return { requestId: ctx.requestId };
      },
    });
    const stream = await g.stream(0);
    await s.ready();
    stream.send({ requestId: 5, predict: { data: { json: '1' } } });
    await eventually(() => started, 5000, 'the handler to start');
    await s.stop();
    const stop = stream.received.findIndex((m) => m.body === 'stopServing');
    const answer = stream.received.findIndex((m) => m.requestId === 5 && m.body === 'predict');
    expect(stop).toBeGreaterThan(0);
    expect(answer).toBeGreaterThan(stop);
    expect(stream.clientEnd).toBe('half-closed');
    await sleep(300);
    expect(g.streams).toHaveLength(1);
  });

  it('stop() bounds the wait for in-flight work by drainTimeoutMs', async () => {
    const g = await gate({ heartbeatInterval: 100 });
    let aborted = false;
    let started = false;
    const s = service(
      g,
      {
        predict: (_req, ctx) =>
          new Promise((resolve) => {
            started = true;
            ctx.signal.addEventListener('abort', () => {
              aborted = true;
              resolve(null);
            });
          }),
      },
      { drainTimeoutMs: 200 },
    );
    const stream = await g.stream(0);
    await s.ready();
    stream.send({ requestId: 1, predict: { data: { json: '1' } } });
    await eventually(() => started, 5000, 'the handler to start');
    const stopping = Date.now();
    await s.stop();
    expect(Date.now() - stopping).toBeLessThan(3000);
    expect(aborted).toBe(true);
  });
});

describe('model service: cluster updates', () => {
  it('opens a connection to every listed gateway and closes those no longer listed', async () => {
    const a = await gate({ heartbeatInterval: 100 });
    const b = await gate({ heartbeatInterval: 100 });
    const s = service(a, {});
    const streamA = await a.stream(0);
    await s.ready();
    streamA.send({ cluster: { servers: [a.address, b.address], currentServer: a.address } });
    const streamB = await b.stream(0);
    const first = await streamB.waitFor(() => true);
    expect(first.body).toBe('startServing');
    const startA = await streamA.waitFor((m) => m.body === 'startServing');
    expect(first.startServing?.instanceBootUuid).toBe(startA.startServing?.instanceBootUuid);
    await eventually(() => s.connectedGateways().length === 2, 5000, 'two connected gateways');
    expect(s.gateways().sort()).toEqual([a.address, b.address].sort());

    // B now says the cluster is B alone: the connection to A closes gracefully and stays closed.
    streamB.send({ cluster: { servers: [b.address], currentServer: b.address } });
    await streamA.waitFor((m) => m.body === 'stopServing');
    expect(await streamA.waitClientEnd()).toBe('half-closed');
    await sleep(300);
    expect(a.streams).toHaveLength(1);
    expect(s.gateways()).toEqual([b.address]);
  });

  it('ignores an empty list and one without currentServer', async () => {
    const a = await gate({ heartbeatInterval: 100 });
    const s = service(a, {});
    const stream = await a.stream(0);
    await s.ready();
    stream.send({ cluster: { servers: [], currentServer: a.address } });
    stream.send({ cluster: { servers: ['127.0.0.1:1'], currentServer: a.address } });
    await sleep(300);
    expect(stream.open).toBe(true);
    expect(s.gateways()).toEqual([a.address]);
    expect(stream.count('stopServing')).toBe(0);
  });
});
