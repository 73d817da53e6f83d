import { afterEach, describe, expect, it } from 'vitest';
import { GateClient, serveModel, type ModelService } from '../../sdk/index.js';
import { ECHO_TOKEN, TEST_KEY, eventually, startTestGateway, type TestGateway } from '../support/gateway.js';

const MiB = 1024 * 1024;

/**
 * The SDK's side of the bulk lane (sdk/service/bulk-lane.ts, core/gate/bulk-lane.ts): it opens the
 * lane the gateway offers, serves the large requests that come on it, answers them there, takes their
 * cancel, and drains both streams before it leaves.
 */
describe('the SDK opens and serves the bulk lane the gateway offers (#25)', () => {
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
      descriptor: { name: 'sdk-lane' },
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
  const lanes = () => gw!.gateway.gate.instances(10).map((i) => i.bulkLane ?? false);

  it('answers large predict and ext calls, which cross the lane, and small ones beside them', async () => {
    gw = await startTestGateway();
    const service = serve({
      predict: (req) => ({ length: req.data.json<{ fill: string }>().fill.length }),
      ext: (method, params) => ({ method, length: String(params.fill).length }),
    });
    await service.ready();
    await eventually(() => lanes()[0] === true, 5000, 'the lane attached');
    const c = client();
    const [large, small, ext] = await Promise.all([
      c.predictJson({ fill: 'a'.repeat(MiB) }),
      c.predictJson({ fill: 'b' }),
      c.ext('size', { fill: 'c'.repeat(MiB) }),
    ]);
    expect(large).toEqual({ length: MiB });
    expect(small).toEqual({ length: 1 });
    expect(JSON.parse(ext.data!.json!)).toEqual({ method: 'size', length: MiB });
    expect(lanes()).toEqual([true]);
  });

  it("a large call's cancel reaches its handler", async () => {
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
    await eventually(() => lanes()[0] === true, 5000, 'the lane attached');
    const err = await client()
      .predictJson({ fill: 'a'.repeat(MiB) }, { timeoutSec: 1 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'PREDICT_TIMEOUT', statusCode: 504 });
    await eventually(() => aborted, 3000, 'the handler signal to abort');
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
