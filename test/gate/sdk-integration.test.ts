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

  it('cancel reaches the handler when the client gives up at its deadline', async () => {
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
    const err = await client()
      .predictJson({ slow: true }, { timeoutSec: 1 })
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
});
