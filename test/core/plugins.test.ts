import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../core/config/load.js';
import { BootError } from '../../core/errors.js';
import { createGateway } from '../../core/gateway.js';
import { silentLogger } from '../../core/observe/logger.js';
import { ECHO_TOKEN, TEST_KEY, startTestGateway, testConfigInput } from '../support/gateway.js';
import { RawServiceStream, json, rawClient } from '../support/raw-gate-client.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/plugins/${name}`, import.meta.url));
const customPluginPath = fileURLToPath(new URL('../../examples/custom-plugin/index.ts', import.meta.url));

async function bootFails(plugins: Record<string, unknown>): Promise<BootError> {
  const config = buildConfig(testConfigInput({ plugins }), { env: {} });
  try {
    await createGateway(config, { logger: silentLogger() });
  } catch (err) {
    if (err instanceof BootError) return err;
    throw err;
  }
  throw new Error('the boot was expected to fail');
}

describe('plugin loader', () => {
  it('mounts an enabled built-in plugin and leaves a disabled one out', async () => {
    const on = await createGateway(buildConfig(testConfigInput({ plugins: { enabled: ['health'] } }), { env: {} }), {
      logger: silentLogger(),
    });
    const res = await request(on.app.callback()).get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });

    const off = await createGateway(buildConfig(testConfigInput({ plugins: { enabled: [] } }), { env: {} }), { logger: silentLogger() });
    const missing = await request(off.app.callback()).get('/health');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'NOT_FOUND', type: 'not_found_error' });
  });

  it('loads a custom plugin from a path, validates its options and serves it through the Gate', async () => {
    const gw = await startTestGateway(
      testConfigInput({ plugins: { custom: [{ path: customPluginPath }], options: { shout: { greeting: 'HEY' } } } }),
    );
    const client = rawClient(gw.grpcAddress);
    const service = new RawServiceStream(client);
    try {
      service.startServing(ECHO_TOKEN, 'shout');
      await service.next((m) => m.body === 'serviceInfo');
      const pending = request(gw.httpUrl)
        .post('/api/custom/shout/demo/echo')
        .set('PLATFORM-API-KEY', TEST_KEY)
        .send({ text: 'quiet words' })
        .then((r) => r);
      const req = await service.next((m) => m.body === 'predict');
      service.send({ requestId: req.requestId, predict: { data: json({ got: JSON.parse(req.predict!.data!.json!).text }) } });
      const res = await pending;
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ greeting: 'HEY', answer: { got: 'QUIET WORDS' } });
      const unauthorized = await request(gw.httpUrl).post('/api/custom/shout/demo/echo').send({ text: 'x' });
      expect(unauthorized.status).toBe(401);
    } finally {
      service.close();
      client.close();
      await gw.close();
    }
  });

  it('stops the boot with a coded error naming the plugin', async () => {
    expect(await bootFails({ enabled: ['no-such-plugin'] })).toMatchObject({
      code: 'PLUGIN_NOT_FOUND',
      message: expect.stringContaining('no-such-plugin'),
    });
    expect(await bootFails({ enabled: ['../health'] })).toMatchObject({ code: 'PLUGIN_NOT_FOUND' });
    expect(await bootFails({ custom: [{ path: fixture('no-default.ts') }] })).toMatchObject({
      code: 'PLUGIN_INVALID',
      message: expect.stringContaining('no-default.ts'),
    });
    const badName = await bootFails({ custom: [{ path: fixture('bad-name.ts') }] });
    expect(badName.code).toBe('PLUGIN_INVALID');
    expect(badName.problems).toEqual(expect.arrayContaining([expect.stringContaining('kebab-case'), 'routes must be a function']));
    expect(await bootFails({ custom: [{ path: fixture('does-not-exist.ts') }] })).toMatchObject({ code: 'PLUGIN_NOT_FOUND' });
    expect(await bootFails({ enabled: ['health'], custom: [{ path: fixture('health-again.ts') }] })).toMatchObject({
      code: 'PLUGIN_DUPLICATE',
      message: expect.stringContaining("'health'"),
    });
    const options = await bootFails({ custom: [{ path: customPluginPath }], options: { shout: { greeting: 5 } } });
    expect(options).toMatchObject({ code: 'PLUGIN_OPTIONS_INVALID' });
    expect(options.problems).toEqual(['plugins.options.shout/greeting: must be string']);
    expect(await bootFails({ options: { ghost: {} } })).toMatchObject({
      code: 'PLUGIN_OPTIONS_INVALID',
      message: expect.stringContaining('ghost'),
    });
  });

  it('starts the plugins before the gateway listens for HTTP and gRPC', async () => {
    const freePort = () =>
      new Promise<number>((resolve) => {
        const probe = createServer().listen(0, '127.0.0.1', () => {
          const { port } = probe.address() as AddressInfo;
          probe.close(() => resolve(port));
        });
      });
    const [httpPort, grpcPort] = [await freePort(), await freePort()];
    const { seen } = await import('../fixtures/plugins/probe-listeners.js');
    const gw = await startTestGateway(
      testConfigInput({ server: { httpPort, grpcPort }, plugins: { custom: [{ path: fixture('probe-listeners.ts') }] } }),
    );
    try {
      expect(seen).toEqual([{ http: false, grpc: false }]);
      const health = await request(gw.httpUrl).get('/nothing-here');
      expect(health.status).toBe(404); // and it listens once started
    } finally {
      await gw.close();
    }
  });

  it('creates one instance of a plugin per gateway, started before listening and stopped at close', async () => {
    const { lifecycle } = await import('../fixtures/plugins/counter.js');
    const plugins = (step: number) => ({ custom: [{ path: fixture('counter.ts') }], options: { counter: { step } } });
    const one = await startTestGateway(testConfigInput({ plugins: plugins(1) }));
    const two = await startTestGateway(testConfigInput({ plugins: plugins(10) }));
    try {
      expect(lifecycle).toEqual(['start 1', 'start 2']);
      await request(one.httpUrl).get('/counter');
      const first = await request(one.httpUrl).get('/counter');
      const second = await request(two.httpUrl).get('/counter');
      // Each gateway counts its own hits with its own options: no state shared through the module.
      expect(first.body).toEqual({ instance: 1, hits: 2 });
      expect(second.body).toEqual({ instance: 2, hits: 10 });
    } finally {
      await one.close();
      await two.close();
    }
    expect(lifecycle).toEqual(['start 1', 'start 2', 'stop 1 after 2', 'stop 2 after 10']);
  });

  it('refuses a plugin that mixes create() with hooks, or whose instance does nothing', async () => {
    const mixed = await bootFails({ custom: [{ path: fixture('create-and-hooks.ts') }] });
    expect(mixed.code).toBe('PLUGIN_INVALID');
    expect(mixed.problems).toEqual([expect.stringContaining('not beside create()')]);
    const empty = await bootFails({ custom: [{ path: fixture('empty-instance.ts') }] });
    expect(empty).toMatchObject({ code: 'PLUGIN_INVALID', message: expect.stringContaining("'empty-instance'") });
    expect(empty.problems).toEqual(['an instance needs routes() or start()']);
  });

  it('a disabled custom plugin is not loaded', async () => {
    const gw = await createGateway(
      buildConfig(testConfigInput({ plugins: { custom: [{ path: customPluginPath, enabled: false }] } }), { env: {} }),
      { logger: silentLogger() },
    );
    expect(gw.plugins).toHaveLength(0);
  });
});
