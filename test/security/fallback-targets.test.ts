/**
 * Issue 25, N4 and N9: a fallback is a service the request reaches without being addressed to it, so
 * it gets the checks a direct request gets. Against a real gateway on loopback, two accounts (alice,
 * bob) and real HTTP engines behind the upstream connector:
 * - N4: `models: [...]` and configured `fallbacks` sent the caller's config to the fallback target
 *   unchecked: `seed: 9999`, `temperature: 7` or a missing required `seed` reached `alice/alice-req`,
 *   which refuses the same body sent directly with 400. Now a target the config does not fit is
 *   skipped, with the reason in the final error.
 * - N9: a public service could fall back to another account's private one, and every caller then
 *   reached the private service and saw its name. Now such a config is refused at boot, and each
 *   fallback is access-checked for the caller at request time.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '../../core/config/load.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { startOpenAiUpstream, startScriptedEngine, type ScriptedEngine, type Upstream } from '../support/upstream.js';

const ALICE_KEY = 'alice-key-model-requests-000001';
const BOB_KEY = 'bob-key-model-requests-00000001';
const CHAT = '/api/adapters/chatapi/v1/chat/completions';

function configInput(healthyUrl: string, failingUrl: string, services: Record<string, unknown>[] = []): Record<string, any> {
  const upstream = (baseUrl: string) => ({ api: 'openai', baseUrl, defaultModel: 'm' });
  const svc = (id: number, name: string, account: string, extra: Record<string, unknown>) => ({
    id,
    name,
    account,
    public: true,
    family: 'openai',
    ...extra,
  });
  return {
    server: { httpPort: 0, grpcPort: 0 },
    gate: { heartbeatIntervalMs: 200, defaultTimeoutSec: 10 },
    accounts: [
      { id: 1, name: 'alice', requestsPerSecond: 1000 },
      { id: 2, name: 'bob', requestsPerSecond: 1000 },
    ],
    apiKeys: [
      { name: 'alice', account: 'alice', key: ALICE_KEY, permissions: ['MODEL_REQUESTS'] },
      { name: 'bob', account: 'bob', key: BOB_KEY, permissions: ['MODEL_REQUESTS'] },
    ],
    services: [
      // Its registry model requires a seed of at most 1000 and a temperature of at most 2.
      svc(1, 'alice-req', 'alice', { provider: 'alice-models', defaultModel: 'req-model', upstream: upstream(`${healthyUrl}/v1`) }),
      svc(2, 'bob-flaky', 'bob', { upstream: upstream(failingUrl) }),
      svc(3, 'bob-primary', 'bob', { upstream: upstream(failingUrl), fallbacks: ['alice/alice-req'] }),
      svc(4, 'bob-empty', 'bob', { connectionTokens: [{ token: 'bob-empty-service-token-1' }], fallbacks: ['alice/alice-req'] }),
      // Public, falling back to its owner's private service: allowed at boot, but only bob may reach it.
      svc(5, 'bob-front', 'bob', { upstream: upstream(failingUrl), fallbacks: ['bob/bob-private'] }),
      svc(6, 'bob-private', 'bob', { public: false, upstream: upstream(`${healthyUrl}/v1`) }),
      svc(7, 'alice-private', 'alice', { public: false, upstream: upstream(`${healthyUrl}/v1`) }),
      ...services,
    ],
    registry: {
      providers: [{ name: 'alice-models', displayName: 'Alice' }],
      models: [
        {
          name: 'req-model',
          providers: ['alice-models'],
          createdAt: '2026-01-01T00:00:00Z',
          parameters: {
            constants: [],
            variables: [
              { type: 'integer', name: 'seed', min: 0, max: 1000, required: true },
              { type: 'number', name: 'temperature', min: 0, max: 2 },
            ],
          },
        },
      ],
    },
    plugins: { enabled: ['chatapi', 'sync-predict', 'upstream'] },
  };
}

describe('fallback targets are checked like direct requests (issue 25 N4, N9)', () => {
  let gw: TestGateway;
  let healthy: Upstream;
  let failing: ScriptedEngine;

  beforeAll(async () => {
    healthy = await startOpenAiUpstream();
    failing = await startScriptedEngine((_req, res) =>
      res
        .writeHead(503, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'engine overloaded', type: 'server_error' } })),
    );
    gw = await startTestGateway(configInput(healthy.url, failing.url));
  });
  afterAll(async () => {
    await gw?.close();
    await healthy?.close();
    await failing?.close();
  });

  const chat = (key: string, body: Record<string, unknown>) =>
    request(gw.httpUrl)
      .post(CHAT)
      .set('Authorization', `Bearer ${key}`)
      .send({ messages: [{ role: 'user', content: 'hi' }], ...body });

  it('the target refuses these configs when sent directly', async () => {
    for (const config of [{ seed: 9999 }, { seed: 1, temperature: 7 }, {}]) {
      const res = await chat(BOB_KEY, { model: 'alice/alice-req', ...config });
      expect(res.status).toBe(400);
    }
  });

  it('N4: models: [...] skips a target the config does not fit, and says why', async () => {
    const before = healthy.requests.length;
    const cases: [Record<string, unknown>, string][] = [
      [{ seed: 9999 }, "Parameter 'seed' must be at most 1000"],
      [{ seed: 1, temperature: 7 }, "Parameter 'temperature' must be at most 2"],
      [{}, "Parameter 'seed' is required"],
    ];
    for (const [config, reason] of cases) {
      const res = await chat(BOB_KEY, { model: 'bob/bob-flaky', models: ['alice/alice-req'], ...config });
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body.error.message).toContain('engine overloaded');
      expect(res.body.error.message).toContain(`fallbacks skipped: alice/alice-req: ${reason}`);
    }
    expect(healthy.requests.length).toBe(before);
    // A config that fits goes on to the target.
    const ok = await chat(BOB_KEY, { model: 'bob/bob-flaky', models: ['alice/alice-req'], seed: 5 });
    expect(ok.status).toBe(200);
    expect(ok.headers['x-served-by']).toMatch(/^alice\/alice-req;/);
    expect(healthy.requests.at(-1)!.body.seed).toBe(5);
  });

  it('N4: configured fallbacks are checked the same way, on a retry and when the service has no instance', async () => {
    const before = healthy.requests.length;
    const retried = await chat(BOB_KEY, { model: 'bob/bob-primary', seed: 9999 });
    expect(retried.status).toBe(503);
    expect(retried.body.error.message).toContain("fallbacks skipped: alice/alice-req: Parameter 'seed' must be at most 1000");
    const noInstance = await request(gw.httpUrl)
      .post('/api/platformgate/account/bob/model/bob-empty/predict-with-config')
      .set('PLATFORM-API-KEY', BOB_KEY)
      .send({ data: { messages: [{ role: 'user', content: 'hi' }] }, config: { temperature: 7, seed: 1 } });
    expect(noInstance.status).toBe(400);
    expect(noInstance.body.error).toMatchObject({ code: 'NO_ACTIVE_INSTANCES' });
    expect(noInstance.body.error.message).toContain("fallbacks skipped: alice/alice-req: Parameter 'temperature' must be at most 2");
    expect(healthy.requests.length).toBe(before);
    await chat(BOB_KEY, { model: 'bob/bob-primary', seed: 7 }).expect(200);
    expect(healthy.requests.at(-1)!.body.seed).toBe(7);
  });

  it('N9: a fallback the caller may not call is skipped for that caller, and its name is not shown', async () => {
    const before = healthy.requests.length;
    const res = await chat(ALICE_KEY, { model: 'bob/bob-front' });
    expect(res.status).toBe(503);
    expect(res.body.error.message).toContain('a fallback this caller may not call');
    expect(JSON.stringify(res.body) + JSON.stringify(res.headers)).not.toContain('bob-private');
    expect(healthy.requests.length).toBe(before);
    // Its owner reaches it.
    const own = await chat(BOB_KEY, { model: 'bob/bob-front' });
    expect(own.status).toBe(200);
    expect(own.headers['x-served-by']).toMatch(/^bob\/bob-private;/);
  });

  it("N9: a config whose service falls back to another account's private service is refused at boot", () => {
    const input = configInput(healthy.url, failing.url, [
      {
        id: 8,
        name: 'bob-public',
        account: 'bob',
        public: true,
        family: 'openai',
        upstream: { api: 'openai', baseUrl: failing.url, defaultModel: 'm' },
        fallbacks: ['alice/alice-private'],
      },
    ]);
    expect(() => buildConfig(input, { env: {} })).toThrow(
      /services\[7\] \(bob-public\): fallback 'alice\/alice-private' is a private service of another account/,
    );
  });
});
