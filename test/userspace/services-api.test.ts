/**
 * Services managed at run time through the user-space API, end to end on every store home: a service
 * with an `upstream` block pointing at a scripted engine on loopback is created, called through Chat
 * Completions (the openai SDK) and sync predict without a restart, changed (its engine replaced),
 * and removed (then 400 SERVICE_NOT_FOUND). Config-file services are listed read-only; the config's
 * checks apply (fallbacks, aliases, names, what only the operator's file may say); another account's
 * members cannot touch the service. On MongoDB, two gateways sharing the store see each change
 * within 2 s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ECHO_TOKEN, TEST_KEY, eventually, type TestGateway } from '../support/gateway.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { engineSaying, startScriptedEngine } from '../support/upstream.js';
import { RawServiceStream, rawClient } from '../support/raw-gate-client.js';
import { encodeLoadReport } from '../../proto/src/index.js';
import { capturingLogger } from '../ops/log-capture.js';
import {
  DEVELOPER,
  MANAGE_KEY,
  MANAGE_OTHER_KEY,
  OUTSIDER,
  VIEWER,
  signedIn,
  startTestGateway,
  userSpaceConfig,
  type Client,
} from './support.js';

const SERVICES = '/api/platformcore/account/demo/services';
const ENGINE_KEY = 'sk-engine-secret-0001';
/** How long a change may take to reach another gateway (docs/user-space.md). */
const SYNC_BOUND_MS = 2000;

type Engine = Awaited<ReturnType<typeof engineSaying>>;

function config(store: Record<string, unknown>): Record<string, any> {
  const base = userSpaceConfig();
  return {
    ...base,
    store,
    // A private service of the other account, for the fallback rule.
    services: [...base.services, { id: 12, name: 'secret', account: 'other', public: false }],
    plugins: { enabled: ['user-space', 'sync-predict', 'chatapi', 'upstream'] },
  };
}

const chat = (gw: TestGateway) => new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi`, maxRetries: 0 });
const ask = async (gw: TestGateway, model: string) =>
  (await chat(gw).chat.completions.create({ model, messages: [{ role: 'user', content: 'hello' }] })).choices[0]!.message.content;
const predict = (gw: TestGateway, model: string) =>
  fetch(`${gw.httpUrl}/api/platformgate/account/demo/model/${model}/predict-with-config`, {
    method: 'POST',
    headers: { 'PLATFORM-API-KEY': TEST_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ data: { messages: [{ role: 'user', content: 'sync' }] }, config: {} }),
  });
const upstream = (engine: Engine, extra: Record<string, unknown> = {}) => ({
  api: 'openai',
  baseUrl: engine.url,
  defaultModel: 'm',
  ...extra,
});
async function json(response: Response): Promise<any> {
  return response.json();
}

/** The API on one store home: everything one gateway shows. */
function apiSuite(home: string, store: () => Record<string, unknown>) {
  describe(`services API on the ${home} store`, () => {
    let gw: TestGateway;
    let dev: Client;
    let engineA: Engine;
    let engineB: Engine;
    const log = capturingLogger();

    beforeAll(async () => {
      engineA = await engineSaying('from engine A');
      engineB = await engineSaying('from engine B');
      gw = await startTestGateway(config(store()), { logger: log.logger });
      dev = await signedIn(gw, DEVELOPER);
    });
    afterAll(async () => {
      await gw?.close();
      await engineA?.close();
      await engineB?.close();
    });

    let created: any;

    it('creates a service with an upstream block that answers at once, its secrets shown never (the token once)', async () => {
      const withCredentials = engineA.url.replace('http://', 'http://engine-user:engine-pass@');
      const response = await dev.call('POST', SERVICES, {
        name: 'runtime-llm',
        family: 'openai',
        aliases: ['runtime-alias'],
        upstream: upstream(engineA, { baseUrl: withCredentials, apiKey: ENGINE_KEY }),
      });
      const text = await response.text();
      expect(response.status, text).toBe(201);
      created = JSON.parse(text);
      expect(created).toMatchObject({
        name: 'runtime-llm',
        account: 'demo',
        source: 'stored',
        public: false,
        upstream: { apiKeySet: true, baseUrl: expect.stringContaining('***:***@127.0.0.1') },
      });
      expect(created.connectionToken.token).toMatch(/^svc_/);
      expect(created.connectionTokens).toEqual([
        { id: created.connectionToken.id, prefix: created.connectionToken.token.slice(0, 12), createdAt: expect.any(String) },
      ]);
      expect(text).not.toContain(ENGINE_KEY);
      expect(text).not.toContain('engine-pass');

      expect(await ask(gw, 'demo/runtime-llm')).toBe('from engine A');
      expect(await ask(gw, 'runtime-alias')).toBe('from engine A');
      expect(engineA.requests.at(-1)!.headers.authorization).toBe(`Bearer ${ENGINE_KEY}`);
      const sync = await predict(gw, 'runtime-llm');
      expect(sync.status).toBe(200);
      // The new connection token lets a model service dial in for this service.
      expect(gw.gateway.directory.serviceForConnectionToken(created.connectionToken.token)?.id).toBe(created.id);

      const read = await dev.call('GET', `${SERVICES}/runtime-llm`);
      const readText = await read.text();
      expect(read.status).toBe(200);
      expect(JSON.parse(readText)).toMatchObject({ id: created.id, instances: 1 });
      expect(readText).not.toContain(ENGINE_KEY);
      expect(readText).not.toContain('connectionToken"');
    });

    it('lists config-file services read-only beside the stored one', async () => {
      const { services } = await json(await dev.call('GET', SERVICES));
      expect(services.map((s: any) => [s.name, s.source])).toEqual([
        ['echo', 'config'],
        ['private', 'config'],
        ['runtime-llm', 'stored'],
      ]);
      expect(created.id).toBeGreaterThan(12);
      const refused = await dev.call('PATCH', `${SERVICES}/echo`, { public: false });
      expect(refused.status).toBe(409);
      expect((await json(refused)).error.code).toBe('CONFIG_ENTRY_READ_ONLY');
      expect((await dev.call('DELETE', `${SERVICES}/10`)).status).toBe(409);
    });

    it('shows each connected instance with its version, load and state, and an upstream engine with its health', async () => {
      // A dialled-in instance of the config service `echo`, announcing a version and reporting load.
      const client = rawClient(gw.grpcAddress);
      const stream = new RawServiceStream(client);
      const sick = await startScriptedEngine((_req, res) => res.writeHead(503).end());
      try {
        stream.send({
          startServing: {
            connectionToken: ECHO_TOKEN,
            serviceDescriptor: { name: 'raw' },
            instanceBootUuid: 'echo-boot-1',
            hostname: 'model-host',
            version: 142,
            image: 'registry.example/echo:1.4.2',
          },
        });
        await stream.next((m) => m.body === 'serviceInfo');
        stream.send({ heartBeat: {}, headers: encodeLoadReport({ inFlight: 2, queueDepth: 3, kvCacheUsage: 0.5 }) });
        await vi.waitFor(
          async () => {
            const echo = await json(await dev.call('GET', `${SERVICES}/echo`));
            expect(echo.instances).toBe(1);
            expect(echo.connectedInstances).toEqual([
              {
                name: 'echo-boot-1',
                kind: 'stream',
                state: 'serving',
                hostname: 'model-host',
                version: 142,
                image: 'registry.example/echo:1.4.2',
                inFlight: 0,
                load: { inFlight: 2, queueDepth: 3, kvCacheUsage: 0.5, at: expect.any(String) },
                connectedAt: expect.any(String),
                bulkLane: false,
              },
            ]);
          },
          { timeout: 5000, interval: 50 },
        );
        // Its bulk lane (docs/gate-protocol.md): a second stream of the same instance, shown as such.
        const lane = new RawServiceStream(client);
        lane.startBulkLane(ECHO_TOKEN, 'echo-boot-1');
        await vi.waitFor(
          async () => {
            const echo = await json(await dev.call('GET', `${SERVICES}/echo`));
            expect(echo.connectedInstances).toEqual([expect.objectContaining({ name: 'echo-boot-1', bulkLane: true })]);
          },
          { timeout: 5000, interval: 50 },
        );

        // The upstream service without a health check: its engine is `unchecked`, its host shown without credentials.
        const runtime = await json(await dev.call('GET', `${SERVICES}/runtime-llm`));
        expect(runtime.connectedInstances).toEqual([
          expect.objectContaining({
            kind: 'local',
            state: 'serving',
            hostname: new URL(engineA.url).host,
            engineHealth: { status: 'unchecked', consecutiveFailures: 0, checkedAt: null },
          }),
        ]);

        // Engines with a health check: one answers it, one answers 503 and is out of routing.
        const healthCheck = { path: '/health', intervalMs: 100, timeoutMs: 500, failuresBeforeDown: 1 };
        const withCredentials = sick.url.replace('http://', 'http://engine-user:engine-pass@');
        for (const [name, engine] of [
          ['checked-llm', engineA.url],
          ['sick-llm', withCredentials],
        ] as const) {
          const response = await dev.call('POST', SERVICES, { name, upstream: { ...upstream(engineA), baseUrl: engine, healthCheck } });
          expect(response.status, await response.clone().text()).toBe(201);
        }
        await vi.waitFor(
          async () => {
            const { services } = await json(await dev.call('GET', SERVICES));
            const byName = Object.fromEntries(services.map((s: any) => [s.name, s]));
            expect(byName['checked-llm'].connectedInstances).toEqual([
              expect.objectContaining({
                state: 'serving',
                engineHealth: { status: 'healthy', consecutiveFailures: 0, checkedAt: expect.any(String) },
              }),
            ]);
            expect(byName['sick-llm'].instances).toBe(0);
            expect(byName['sick-llm'].connectedInstances).toEqual([
              expect.objectContaining({
                state: 'draining',
                engineHealth: expect.objectContaining({ status: 'unhealthy', checkedAt: expect.any(String) }),
              }),
            ]);
            expect(byName['sick-llm'].connectedInstances[0].engineHealth.consecutiveFailures).toBeGreaterThan(0);
            expect(JSON.stringify(byName['sick-llm'])).not.toContain('engine-pass');
          },
          { timeout: 5000, interval: 50 },
        );
        for (const name of ['checked-llm', 'sick-llm']) expect((await dev.call('DELETE', `${SERVICES}/${name}`)).status).toBe(204);
      } finally {
        stream.call.end();
        client.close();
        await sick.close();
      }
    });

    it('changes the upstream block: new calls go to the new engine, the one in flight finishes on the old', async () => {
      const held = { held: true };
      const slow = await engineSaying('slow engine', held);
      try {
        expect((await dev.call('PATCH', `${SERVICES}/runtime-llm`, { upstream: upstream(slow) })).status).toBe(200);
        const inFlight = ask(gw, 'demo/runtime-llm');
        await eventually(() => slow.requests.length === 1, 5000, 'the call to reach the slow engine');
        const changed = await dev.call('PATCH', `${SERVICES}/${created.id}`, { upstream: upstream(engineB) });
        expect(changed.status).toBe(200);
        // The engine key was given for engine A's origin: a new origin does not inherit it.
        expect((await json(changed)).upstream.apiKeySet).toBe(false);
        expect(await ask(gw, 'demo/runtime-llm')).toBe('from engine B');
        slow.release();
        expect(await inFlight).toBe('slow engine');
        expect(engineB.requests.at(-1)!.headers.authorization).toBeUndefined();
      } finally {
        await slow.close();
      }
    });

    it('adds and revokes connection tokens', async () => {
      const first = created.connectionToken;
      const added = await json(
        await dev.call('PATCH', `${SERVICES}/runtime-llm`, { newConnectionToken: true, revokeConnectionTokens: [first.id] }),
      );
      expect(added.connectionToken.token).not.toBe(first.token);
      expect(added.connectionTokens.map((t: any) => t.id)).toEqual([added.connectionToken.id]);
      expect(gw.gateway.directory.serviceForConnectionToken(first.token)).toBeUndefined();
      expect(gw.gateway.directory.serviceForConnectionToken(added.connectionToken.token)?.id).toBe(created.id);
    });

    it('applies the config checks: names, aliases, fallbacks, the registry, and what only the config file may say', async () => {
      const refusal = async (method: string, path: string, body: unknown) => {
        const response = await dev.call(method, path, body);
        return [response.status, (await json(response)).error.code];
      };
      expect(await refusal('POST', SERVICES, { name: 'echo' })).toEqual([409, 'SERVICE_NAME_TAKEN']);
      expect(await refusal('POST', SERVICES, { name: 'runtime-llm' })).toEqual([409, 'SERVICE_NAME_TAKEN']);
      expect(await refusal('POST', SERVICES, { name: 'second', aliases: ['runtime-alias'] })).toEqual([409, 'SERVICE_ALIAS_TAKEN']);
      expect(await refusal('POST', SERVICES, { name: 'leaky', public: true, fallbacks: ['other/secret'] })).toEqual([
        400,
        'VALIDATION_FAILED',
      ]);
      expect(await refusal('POST', SERVICES, { name: 'nowhere', fallbacks: ['demo/missing'] })).toEqual([400, 'VALIDATION_FAILED']);
      expect(await refusal('POST', SERVICES, { name: 'typo', provider: 'no-such-provider' })).toEqual([400, 'VALIDATION_FAILED']);
      expect(await refusal('POST', SERVICES, { name: 'waking', waker: { url: 'http://127.0.0.1:1/' } })).toEqual([
        400,
        'VALIDATION_FAILED',
      ]);
      expect(await refusal('POST', SERVICES, { name: 'env', upstream: upstream(engineA, { apiKeyEnv: 'HOME' }) })).toEqual([
        400,
        'VALIDATION_FAILED',
      ]);
      expect(await refusal('POST', SERVICES, { name: 'bad-url', upstream: { api: 'openai', baseUrl: 'file:///etc/passwd' } })).toEqual([
        400,
        'VALIDATION_FAILED',
      ]);
      expect(await refusal('POST', SERVICES, { name: '123' })).toEqual([400, 'VALIDATION_FAILED']);
      const huge = { name: 'huge', configs: [{ id: 1, config: { prompt: 'x'.repeat(70_000) } }] };
      expect(await refusal('POST', SERVICES, huge)).toEqual([413, 'REQUEST_TOO_LARGE']);
      // A fallback to the own account's private service is fine, as in the config file.
      const ok = await dev.call('POST', SERVICES, { name: 'with-fallback', fallbacks: ['demo/private'] });
      expect(ok.status).toBe(201);
      expect((await dev.call('DELETE', `${SERVICES}/with-fallback`)).status).toBe(204);
      // Its name and alias are free again once it is removed.
      const again = await dev.call('POST', SERVICES, { name: 'with-fallback', aliases: ['reused-alias'] });
      expect(again.status).toBe(201);
      expect((await dev.call('DELETE', `${SERVICES}/with-fallback`)).status).toBe(204);
      expect((await dev.call('POST', SERVICES, { name: 'alias-again', aliases: ['reused-alias'] })).status).toBe(201);
      expect((await dev.call('DELETE', `${SERVICES}/alias-again`)).status).toBe(204);
    });

    it('shows a fitted (derived) service with its base, read-only, and keeps its base from being removed', async () => {
      const base = gw.gateway.directory.serviceById(created.id)!;
      gw.gateway.directory.addService({
        ...base,
        id: 900_001,
        name: 'fitted',
        aliases: undefined,
        upstream: undefined,
        connectionTokenHashes: [],
        base: { serviceId: created.id, modelDir: '/tmp/m', ready: true },
      });
      try {
        const view = await json(await dev.call('GET', `${SERVICES}/fitted`));
        expect(view).toMatchObject({ id: 900_001, source: 'derived', base: { id: created.id, name: 'runtime-llm', fitted: true } });
        const refused = await dev.call('PATCH', `${SERVICES}/fitted`, { public: true });
        expect(refused.status).toBe(409);
        expect((await json(refused)).error.code).toBe('SERVICE_READ_ONLY');
        const baseRemoval = await dev.call('DELETE', `${SERVICES}/runtime-llm`);
        expect(baseRemoval.status).toBe(409);
        expect((await json(baseRemoval)).error.code).toBe('CONFLICT');
      } finally {
        gw.gateway.directory.removeService(900_001);
      }
    });

    it("keeps another account's members and keys out, and viewers read-only", async () => {
      const outsider = await signedIn(gw, OUTSIDER);
      for (const [method, body] of [['GET'], ['PATCH', { public: true }], ['DELETE']] as const) {
        const response = await outsider.call(method, `${SERVICES}/runtime-llm`, body);
        expect(response.status).toBe(403);
        expect((await json(response)).error.code).toBe('ACCESS_TO_ANOTHER_ACCOUNT_DENIED');
      }
      const byOtherKey = await fetch(`${gw.httpUrl}${SERVICES}/runtime-llm`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${MANAGE_OTHER_KEY}` },
      });
      expect(byOtherKey.status).toBe(403);
      // The other account's own path does not reach demo's service either.
      const sideways = await outsider.call('PATCH', `/api/platformcore/account/other/services/${created.id}`, { public: true });
      expect(sideways.status).toBe(404);
      const viewer = await signedIn(gw, VIEWER);
      expect((await viewer.call('GET', `${SERVICES}/runtime-llm`)).status).toBe(200);
      const refused = await viewer.call('PATCH', `${SERVICES}/runtime-llm`, { public: true });
      expect(refused.status).toBe(403);
      expect((await json(refused)).error.code).toBe('ROLE_REQUIRED');
      // A MANAGE key of the account acts as its owner.
      const byKey = await fetch(`${gw.httpUrl}${SERVICES}/runtime-llm`, { headers: { authorization: `Bearer ${MANAGE_KEY}` } });
      expect(byKey.status).toBe(200);
      expect(await ask(gw, 'demo/runtime-llm')).toBe('from engine B');
    });

    it('removes the service: it is not callable, its engine stops', async () => {
      expect((await dev.call('DELETE', `${SERVICES}/runtime-llm`)).status).toBe(204);
      expect(gw.gateway.gate.instances(created.id)).toEqual([]);
      const sync = await predict(gw, 'runtime-llm');
      expect(sync.status).toBe(400);
      expect((await json(sync)).error.code).toBe('SERVICE_NOT_FOUND');
      const err = await ask(gw, 'demo/runtime-llm').catch((e: unknown) => e);
      expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(404);
      expect((await dev.call('GET', `${SERVICES}/runtime-llm`)).status).toBe(404);
    });

    it('logged the changes, never the engine key, the URL credentials or a connection token', () => {
      const text = log.text();
      expect(text).toContain('user space: service created');
      expect(text).toContain('upstream engine attached');
      expect(text).not.toContain(ENGINE_KEY);
      expect(text).not.toContain('engine-pass');
      expect(text).not.toContain(created.connectionToken.token);
    });
  });
}

apiSuite('memory', () => ({ kind: 'memory' }));

const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});
apiSuite('embedded', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-us-services-'));
  dataDirs.push(dataDir);
  return { kind: 'embedded', dataDir };
});

describe.skipIf(!requirePrerequisite('user-space services on MongoDB', mongoPrerequisite()))('services on MongoDB', () => {
  let mongo: MongoTestServer;
  beforeAll(async () => {
    mongo = await startMongo();
  });
  afterAll(async () => {
    await mongo?.stop();
  });

  apiSuite('MongoDB-wire', () => ({ kind: 'mongodb', mongodbUri: mongo.freshDatabaseUri() }));

  describe('two gateways sharing the store', () => {
    let first: TestGateway;
    let second: TestGateway;
    let engineA: Engine;
    let engineB: Engine;

    beforeAll(async () => {
      engineA = await engineSaying('from engine A');
      engineB = await engineSaying('from engine B');
      const uri = mongo.freshDatabaseUri();
      first = await startTestGateway(config({ kind: 'mongodb', mongodbUri: uri }));
      second = await startTestGateway(config({ kind: 'mongodb', mongodbUri: uri }));
    });
    afterAll(async () => {
      await first?.close();
      await second?.close();
      await engineA?.close();
      await engineB?.close();
    });

    /** Resolves once `check` passes on a gateway, failing past the documented bound. */
    const within = (what: string, check: () => Promise<boolean>) => eventually(async () => check().catch(() => false), SYNC_BOUND_MS, what);

    it(`see a created, changed and removed service within ${SYNC_BOUND_MS} ms`, async () => {
      const onFirst = await signedIn(first, DEVELOPER);
      const onSecond = await signedIn(second, DEVELOPER);
      const created = await json(await onFirst.call('POST', SERVICES, { name: 'shared-llm', upstream: upstream(engineA) }));
      await within(
        'the second gateway to serve the created service',
        async () => (await ask(second, 'demo/shared-llm')) === 'from engine A',
      );

      // A change made on the second gateway reaches the first.
      expect((await onSecond.call('PATCH', `${SERVICES}/shared-llm`, { upstream: upstream(engineB) })).status).toBe(200);
      await within('the first gateway to call the changed engine', async () => (await ask(first, 'demo/shared-llm')) === 'from engine B');

      expect((await onFirst.call('DELETE', `${SERVICES}/${created.id}`)).status).toBe(204);
      await within('the second gateway to drop the removed service', async () => (await predict(second, 'shared-llm')).status === 400);
      expect(second.gateway.gate.instances(created.id)).toEqual([]);
      expect((await json(await predict(second, 'shared-llm'))).error.code).toBe('SERVICE_NOT_FOUND');
    });
  });
});
