import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectLaunchedServices } from '../../core/bin/expect-launched.js';
import { launchServices } from '../../core/bin/launcher.js';
import { silentLogger } from '../../core/observe/logger.js';
import {
  ECHO_TOKEN,
  OTHER_ACCOUNT_KEY,
  PRIVATE_TOKEN,
  TEST_KEY,
  eventually,
  startTestGateway,
  testConfigInput,
  type TestGateway,
} from '../support/gateway.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { RawServiceStream, json, rawClient } from '../support/raw-gate-client.js';
import { startTcpProxy } from './tcp-proxy.js';

const ECHO_MAIN = fileURLToPath(new URL('../../examples/echo-service/main.ts', import.meta.url));

const get = async (url: string, headers: Record<string, string> = {}) => {
  const res = await fetch(url, { headers });
  return { status: res.status, body: (await res.json()) as any };
};

describe('health probes', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    const input = testConfigInput({ plugins: { enabled: ['health'] } });
    input.services[1].required = true; // demo/private, not public
    gw = await startTestGateway(input);
  });
  afterAll(async () => gw?.close());

  it('answers liveness and readiness', async () => {
    expect(await get(`${gw.httpUrl}/health/live`)).toEqual({ status: 200, body: { status: 'live' } });
    const ready = await get(`${gw.httpUrl}/health/ready`);
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ready');
    expect(ready.body.checks.map((c: any) => [c.name, c.ok])).toEqual([
      ['started', true],
      ['draining', true],
      ['store', true],
    ]);
  });

  it('is degraded while a required service has no instance, naming it only to callers who may see it', async () => {
    const anonymous = await get(`${gw.httpUrl}/health`);
    expect(anonymous).toEqual({ status: 200, body: { status: 'degraded', reasons: ['1 required service(s) have no connected instance'] } });
    expect(JSON.stringify(anonymous.body)).not.toContain('private');

    const owner = await get(`${gw.httpUrl}/health`, { 'PLATFORM-API-KEY': TEST_KEY });
    expect(owner.body).toEqual({ status: 'degraded', reasons: ['service demo/private has no connected instance'], instances: {} });
    const other = await get(`${gw.httpUrl}/health`, { authorization: `Bearer ${OTHER_ACCOUNT_KEY}` });
    expect(other.body.reasons).toEqual(['1 other required service(s) have no connected instance']);
    expect((await get(`${gw.httpUrl}/health`, { 'PLATFORM-API-KEY': 'not-a-key-00000000000000' })).status).toBe(401);

    const client = rawClient(gw.grpcAddress);
    const service = new RawServiceStream(client);
    service.startServing(PRIVATE_TOKEN, 'boot-p');
    const echo = new RawServiceStream(client);
    echo.startServing(ECHO_TOKEN, 'boot-e');
    await eventually(() => gw.gateway.gate.hasInstances(11) && gw.gateway.gate.hasInstances(10));
    expect((await get(`${gw.httpUrl}/health`)).body).toEqual({ status: 'ok' });
    expect((await get(`${gw.httpUrl}/health`, { 'PLATFORM-API-KEY': TEST_KEY })).body).toEqual({
      status: 'ok',
      instances: { 'demo/echo': 1, 'demo/private': 1 },
    });
    // Another account sees the public service only.
    expect((await get(`${gw.httpUrl}/health`, { 'PLATFORM-API-KEY': OTHER_ACCOUNT_KEY })).body).toEqual({
      status: 'ok',
      instances: { 'demo/echo': 1 },
    });
    service.close();
    echo.close();
    client.close();
    await eventually(async () => (await get(`${gw.httpUrl}/health`)).body.status === 'degraded');
  });
});

describe('health of launched services', () => {
  it('turns degraded when a launched service dies, and ok again when it is back', async () => {
    const input = testConfigInput({
      plugins: { enabled: ['health'] },
      launch: [{ name: 'echo', module: ECHO_MAIN, env: { PLATFORM_SERVICE_TOKEN: ECHO_TOKEN } }],
    });
    const gw = await startTestGateway(input);
    const launched = launchServices(gw.gateway.config.launch, gw.grpcAddress, silentLogger(), expectLaunchedServices(gw.gateway));
    try {
      // Expected from the launch on, before it connects.
      expect((await get(`${gw.httpUrl}/health`)).body.status).toBe('degraded');
      await eventually(async () => (await get(`${gw.httpUrl}/health`)).body.status === 'ok', 30_000, 'launched echo connected');
      const [pid] = launched.pids();
      process.kill(pid!, 'SIGKILL');
      await eventually(async () => (await get(`${gw.httpUrl}/health`)).body.status === 'degraded', 10_000, 'degraded after the kill');
      const owner = await get(`${gw.httpUrl}/health`, { 'PLATFORM-API-KEY': TEST_KEY });
      expect(owner.body.reasons).toEqual(['service demo/echo has no connected instance']);
      // The launcher restarts it.
      await eventually(async () => (await get(`${gw.httpUrl}/health`)).body.status === 'ok', 30_000, 'restarted echo connected');
    } finally {
      await launched.stop();
      await gw.close();
    }
  }, 90_000);
});

describe('graceful shutdown (what SIGTERM runs)', () => {
  it('stops taking requests, reports not ready, and lets requests in flight finish', async () => {
    const gw = await startTestGateway(
      testConfigInput({
        plugins: { enabled: ['health', 'sync-predict'] },
        gate: { heartbeatIntervalMs: 200, defaultTimeoutSec: 10, drainTimeoutMs: 5000 },
      }),
    );
    const client = rawClient(gw.grpcAddress);
    const service = new RawServiceStream(client);
    service.startServing(ECHO_TOKEN, 'boot-drain');
    await eventually(() => gw.gateway.gate.hasInstances(10));
    const predict = () =>
      fetch(`${gw.httpUrl}/api/platformgate/account/demo/model/echo/predict`, {
        method: 'POST',
        headers: { 'PLATFORM-API-KEY': TEST_KEY, 'content-type': 'application/json' },
        body: '{"q":1}',
      });

    const inFlight = predict();
    const request = await service.next((m) => m.body === 'predict');
    const closing = gw.close();
    await eventually(async () => (await get(`${gw.httpUrl}/health/ready`)).status === 503, 5000, 'not ready while draining');
    const ready = await get(`${gw.httpUrl}/health/ready`);
    expect(ready.body.checks.find((c: any) => c.name === 'draining')).toMatchObject({ ok: false });
    expect((await get(`${gw.httpUrl}/health/live`)).status).toBe(200);
    const refused = await predict();
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as any).error.code).toBe('GATE_IS_SHUT_DOWN');
    expect(refused.headers.get('connection')).toBe('close');

    service.send({ requestId: request.requestId, predict: { data: json({ finished: true }) } });
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ finished: true });
    await closing;
    client.close();
  });
});

describe.skipIf(!requirePrerequisite('readiness on MongoDB', mongoPrerequisite()))('readiness on MongoDB', () => {
  let server: MongoTestServer;
  beforeAll(async () => {
    server = await startMongo();
  });
  afterAll(async () => server?.stop());

  it('is ready while the store answers and not ready once it is gone', async () => {
    const target = new URL(server.freshDatabaseUri());
    const proxy = await startTcpProxy(target.hostname, Number(target.port));
    target.host = `127.0.0.1:${proxy.port}`;
    const input = testConfigInput({ plugins: { enabled: ['health'] }, store: { kind: 'mongodb', mongodbUri: target.toString() } });
    const gw = await startTestGateway(input);
    try {
      expect((await get(`${gw.httpUrl}/health/ready`)).status).toBe(200);
      await proxy.cut();
      await eventually(async () => (await get(`${gw.httpUrl}/health/ready`)).status === 503, 15_000, 'not ready without the store');
      const report = (await get(`${gw.httpUrl}/health/ready`)).body;
      expect(report.status).toBe('not_ready');
      expect(report.checks.find((c: any) => c.name === 'store')).toMatchObject({ ok: false });
      expect(report.checks.find((c: any) => c.name === 'store').reason).toContain('unreachable');
      // Liveness does not depend on the store.
      expect((await get(`${gw.httpUrl}/health/live`)).status).toBe(200);
    } finally {
      await gw.close().catch(() => undefined);
    }
  }, 60_000);
});
