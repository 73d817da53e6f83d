/**
 * The upstream connector follows services added, changed and removed at run time (the Directory's
 * change, as the user-space sync makes it): an engine attached without a restart, replaced without
 * failing the call in flight, and stopped with its service. Real engines on loopback, the openai SDK.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normaliseService } from '../../core/config/service-config.js';
import type { ServiceEntry } from '../../core/admission/directory.js';
import { TEST_KEY, eventually, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { engineSaying } from '../support/upstream.js';

describe('upstream connector: services changed at run time', () => {
  let gw: TestGateway;
  let client: OpenAI;
  const heldA = { held: false };
  let engineA: Awaited<ReturnType<typeof engineSaying>>;
  let engineB: Awaited<ReturnType<typeof engineSaying>>;

  const entry = (baseUrl: string, extra: Record<string, unknown> = {}): ServiceEntry => {
    const account = gw.gateway.directory.account('demo');
    const raw = {
      id: 40,
      name: 'runtime',
      public: false,
      required: false,
      connectionTokens: [],
      family: 'openai',
      nativeResponses: false,
      batch: false,
      fittable: false,
      configs: [],
      fitConfigs: [],
      waitForInstanceMs: 0,
      upstream: {
        api: 'openai',
        baseUrl,
        headers: {},
        models: {},
        defaultModel: 'm',
        maxConcurrency: 4,
        connectTimeoutMs: 2000,
        firstByteTimeoutMs: 10000,
        idleTimeoutMs: 10000,
      },
      ...extra,
    };
    return { ...normaliseService(raw, account.id), account };
  };
  const ask = (text: string) => client.chat.completions.create({ model: 'demo/runtime', messages: [{ role: 'user', content: text }] });

  beforeAll(async () => {
    engineA = await engineSaying('from engine A', heldA);
    engineB = await engineSaying('from engine B');
    gw = await startTestGateway(testConfigInput({ plugins: { enabled: ['chatapi', 'upstream'] } }));
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await engineA?.close();
    await engineB?.close();
  });

  it('attaches an engine to a service added while running', async () => {
    gw.gateway.directory.addService(entry(engineA.url));
    expect(gw.gateway.gate.instances(40)).toMatchObject([{ kind: 'local', state: 'serving', bootUuid: 'upstream:runtime' }]);
    expect((await ask('hi')).choices[0]!.message.content).toBe('from engine A');
  });

  it('replaces the engine of a changed service; the call in flight on the old one still succeeds', async () => {
    heldA.held = true;
    const inFlight = ask('slow one');
    await eventually(() => engineA.requests.some((r) => r.body?.messages?.[0]?.content === 'slow one'), 5000, 'the call to reach engine A');
    gw.gateway.directory.addService(entry(engineB.url));
    // New calls go to the new engine at once, while the old one finishes its call.
    expect((await ask('after the change')).choices[0]!.message.content).toBe('from engine B');
    expect(
      gw.gateway.gate
        .instances(40)
        .map((i) => i.bootUuid)
        .sort(),
    ).toEqual(['upstream:runtime', 'upstream:runtime#2']);
    engineA.release();
    expect((await inFlight).choices[0]!.message.content).toBe('from engine A');
    await eventually(() => gw.gateway.gate.instances(40).length === 1, 5000, 'the old engine to be closed');
    expect(gw.gateway.gate.instances(40)).toMatchObject([{ bootUuid: 'upstream:runtime#2', state: 'serving' }]);
    expect(engineA.closed).toEqual([]);
  });

  it('keeps the engine and its connections through a change that does not touch it', () => {
    const before = gw.gateway.gate.instances(40);
    gw.gateway.directory.addService(entry(engineB.url, { public: true }));
    expect(gw.gateway.gate.instances(40)).toEqual(before);
  });

  it('stops the engine of a removed service, which is then not found', async () => {
    gw.gateway.directory.removeService(40);
    expect(gw.gateway.gate.instances(40)).toEqual([]);
    const err = await ask('gone?').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(404);
  });

  it('stops the engine when a change drops the upstream block', async () => {
    gw.gateway.directory.addService(entry(engineB.url));
    expect(gw.gateway.gate.instances(40)).toHaveLength(1);
    const withoutUpstream = entry(engineB.url);
    delete (withoutUpstream as { upstream?: unknown }).upstream;
    gw.gateway.directory.addService(withoutUpstream);
    expect(gw.gateway.gate.instances(40)).toEqual([]);
  });
});
