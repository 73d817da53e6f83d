import { afterEach, describe, expect, it } from 'vitest';
import { GateClient, GateClientError, serveModel, type ModelService } from '../../sdk/index.js';
import { ECHO_TOKEN, TEST_KEY, eventually, startTestGateway, type TestGateway } from '../support/gateway.js';

/** The SDK against the real gateway: registration, predict, streams, ext, cancel, reconnect, drain. */
describe('SDK model service and client against the gateway', () => {
  let gw: TestGateway | undefined;
  const services: ModelService[] = [];
  const clients: GateClient[] = [];
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };

  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await Promise.all(services.splice(0).map((s) => s.stop().catch(() => undefined)));
    await gw?.close();
    gw = undefined;
  });

  const serve = (handlers: Parameters<typeof serveModel>[0], extra: Record<string, unknown> = {}) => {
    const service = serveModel(handlers, {
      descriptor: { name: 'sdk-echo' },
      gateways: [gw!.grpcAddress],
      connectionToken: ECHO_TOKEN,
      logger: quiet,
      ...extra,
    });
    services.push(service);
    return service;
  };
  const client = () => {
    const c = new GateClient({ address: gw!.grpcAddress, authToken: TEST_KEY, account: 'demo', model: 'echo' });
    clients.push(c);
    return c;
  };

  it('serves predict, streamed predict, ext and errors', async () => {
    gw = await startTestGateway();
    const service = serve({
      predict(req) {
        const data = req.data.json<{ n?: number; fail?: boolean; text?: string }>();
        if (data.fail) throw new Error('model exploded');
        if (data.n)
          return (async function* () {
            for (let i = 0; i < data.n!; i++) yield { i };
          })();
        return { upper: String(data.text).toUpperCase(), config: req.config?.json() ?? null };
      },
      ext: (method, params) => ({ method, params }),
    });
    await service.ready();
    const c = client();
    expect(await c.predictJson({ text: 'hi' }, { config: { t: 1 } })).toEqual({ upper: 'HI', config: { t: 1 } });
    const frames: unknown[] = [];
    for await (const frame of c.predictJsonStream({ n: 3 })) frames.push(frame);
    expect(frames).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
    expect(JSON.parse((await c.ext('info', { a: 'b' })).data!.json!)).toEqual({ method: 'info', params: { a: 'b' } });
    const failure = await c.predictJson({ fail: true }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(GateClientError);
    expect(failure).toMatchObject({ code: 'platform-action.common.processing-exception', statusCode: 500 });
  });

  // A large call goes on the bulk lane (below): its cancel must reach the handler there too.
  it.each([
    ['a call', { slow: true }],
    ['a large call, on the bulk lane', { fill: 'a'.repeat(1024 * 1024) }],
  ])('cancel reaches the handler of %s when the client gives up at its deadline', async (_what, body) => {
    gw = await startTestGateway();
    let aborted = false;
    const service = serve({
      predict: (_req, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener('abort', () => {
            aborted = true;
            resolve('too late');
          });
        }),
    });
    await service.ready();
    await eventually(() => gw!.gateway.gate.instances(10)[0]?.bulkLane === true, 5000, 'the lane attached');
    const err = await client()
      .predictJson(body, { timeoutSec: 1 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'PREDICT_TIMEOUT', statusCode: 504 });
    await eventually(() => aborted, 3000, 'the handler signal to abort');
  });

  it('two SDK instances share the load', async () => {
    gw = await startTestGateway();
    const seen: string[] = [];
    const slow = (name: string) => ({
      predict: async () => {
        seen.push(name);
        await new Promise((r) => setTimeout(r, 50));
        return name;
      },
    });
    // Two processes in reality: each has its own boot UUID (one process shares one).
    await Promise.all([serve(slow('a'), { instanceBootUuid: 'boot-a' }).ready(), serve(slow('b'), { instanceBootUuid: 'boot-b' }).ready()]);
    await eventually(() => gw!.gateway.gate.instances(10).length === 2, 3000, 'two instances');
    const c = client();
    await Promise.all(Array.from({ length: 8 }, () => c.predictJson({})));
    expect(seen.filter((x) => x === 'a')).toHaveLength(4);
    expect(seen.filter((x) => x === 'b')).toHaveLength(4);
  });

  it('reconnects after the gateway restarts on the same port, keeping its instanceBootUuid', async () => {
    gw = await startTestGateway();
    const address = gw.grpcAddress;
    const port = Number(address.split(':')[1]);
    const service = serve({ predict: () => 'alive' }, { backoff: { initialMs: 50, maxMs: 200 } });
    await service.ready();
    const boot = gw.gateway.gate.instances(10)[0]!.bootUuid;
    expect(boot).toBe(service.instanceBootUuid);
    await gw.close();
    const { testConfigInput } = await import('../support/gateway.js');
    gw = await startTestGateway(testConfigInput({ server: { httpPort: 0, grpcPort: port } }));
    await eventually(() => gw!.gateway.gate.instances(10).length === 1, 8000, 'the service to reconnect');
    expect(gw.gateway.gate.instances(10)[0]!.bootUuid).toBe(boot);
    expect(await client().predictJson({})).toBe('alive');
  });

  it('stop() sends stopServing: the gateway stops routing and the in-flight answer still arrives', async () => {
    gw = await startTestGateway();
    let release: () => void = () => {};
    const service = serve({ predict: () => new Promise((resolve) => (release = () => resolve('drained'))) });
    await service.ready();
    const c = client();
    const pending = c.predictJson({});
    await eventually(() => gw!.gateway.gate.instances(10)[0]?.inFlight === 1, 3000, 'the request to be in flight');
    const stopping = service.stop();
    await eventually(() => !gw!.gateway.gate.hasInstances(10), 3000, 'routing to stop');
    release();
    expect(await pending).toBe('drained');
    await stopping;
  });

  // The bulk lane (sdk/service/bulk-lane.ts, core/gate/bulk-lane.ts, #25): the SDK opens the lane the
  // gateway offers, serves the large requests that come on it, answers them there, takes their
  // cancel, and drains both streams before it leaves.
  const MiB = 1024 * 1024;
  const lanes = () => gw!.gateway.gate.instances(10).map((i) => i.bulkLane ?? false);

  // The ext's 256 params of 4,000 bytes are kept in their bytes by the lane and decoded a slice at a
  // time (sdk/service/ext-in-slices.ts): the handler still gets each of them, as sent.
  it('answers large predict and ext calls, which cross the lane, and small ones beside them', async () => {
    gw = await startTestGateway();
    const service = serve({
      predict: (req) => ({ length: req.data.json<{ fill: string }>().fill.length }),
      ext: (method, params) => ({
        method,
        count: Object.keys(params).length,
        asSent: Object.entries(params).filter(([name, text]) => text === name.repeat(1000)).length,
      }),
    });
    await service.ready();
    await eventually(() => lanes()[0] === true, 5000, 'the lane attached');
    const c = client();
    const [large, small, ext] = await Promise.all([
      c.predictJson({ fill: 'a'.repeat(MiB) }),
      c.predictJson({ fill: 'b' }),
      c.ext('size', Object.fromEntries(Array.from({ length: 256 }, (_, i) => [`p${i + 100}`, `p${i + 100}`.repeat(1000)]))),
    ]);
    expect(large).toEqual({ length: MiB });
    expect(small).toEqual({ length: 1 });
    expect(JSON.parse(ext.data!.json!)).toEqual({ method: 'size', count: 256, asSent: 256 });
    expect(lanes()).toEqual([true]);
  });

  it('stopping waits for a large call in flight on the lane, which is answered', async () => {
    gw = await startTestGateway();
    let started = false;
    const service = serve({
      predict: async (req) => {
        started = true;
        await new Promise((resolve) => setTimeout(resolve, 300));
        return { length: req.data.json<{ fill: string }>().fill.length };
      },
    });
    await service.ready();
    await eventually(() => lanes()[0] === true, 5000, 'the lane attached');
    const answer = client().predictJson({ fill: 'a'.repeat(MiB) });
    await eventually(() => started, 5000, 'the handler started');
    const stopped = service.stop();
    expect(await answer).toEqual({ length: MiB });
    await stopped;
    await eventually(() => lanes().length === 0, 5000, 'the instance gone');
  });

  it('opens none when the service opts out (bulkLane: false)', async () => {
    gw = await startTestGateway();
    const service = serve({ predict: (req) => ({ length: req.data.json<{ fill: string }>().fill.length }) }, { bulkLane: false });
    await service.ready();
    expect(await client().predictJson({ fill: 'a'.repeat(MiB) })).toEqual({ length: MiB });
    expect(lanes()).toEqual([false]);
  });
});
