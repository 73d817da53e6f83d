/**
 * Load-aware routing: SDK instances report their load in heartBeat headers (the handlers' `load()`),
 * and the Gate routes each request to the least loaded instance that has the requested model loaded;
 * with prefix affinity, one conversation prefix keeps going to one instance while it is not busy.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveModel, silentLogger, type LoadReport, type ModelService } from '../../sdk/index.js';
import { TEST_KEY, eventually, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';

const TOKEN = 'load-routing-token-0001';
const AFFINE_TOKEN = 'affine-routing-token-01';

describe('load-aware routing', () => {
  let gw: TestGateway;
  const services: ModelService[] = [];
  const loads: Record<string, LoadReport> = {};

  const instance = (name: string, token: string) => {
    const service = serveModel(
      {
        predict: () => ({
          id: 'x',
          object: 'chat.completion',
          created: 1,
          model: name,
          choices: [{ index: 0, message: { role: 'assistant', content: name, refusal: null }, logprobs: null, finish_reason: 'stop' }],
        }),
        load: () => loads[name],
      },
      { gateways: gw.grpcAddress, connectionToken: token, logger: silentLogger, instanceBootUuid: `boot-${name}`, descriptor: { name } },
    );
    services.push(service);
    return service.ready();
  };

  beforeAll(async () => {
    gw = await startTestGateway(
      testConfigInput({
        gate: { heartbeatIntervalMs: 50, defaultTimeoutSec: 10 },
        services: [
          { id: 60, name: 'pool', account: 'demo', public: true, family: 'openai', connectionTokens: [{ token: TOKEN }] },
          {
            id: 61,
            name: 'affine',
            account: 'demo',
            public: true,
            family: 'openai',
            affinity: { messages: 1 },
            connectionTokens: [{ token: AFFINE_TOKEN }],
          },
        ],
        plugins: { enabled: ['chatapi'] },
      }),
    );
    loads.busy = { inFlight: 3, queueDepth: 6, kvCacheUsage: 0.9, models: ['llama-8b'] };
    loads.idle = { inFlight: 0, queueDepth: 0, kvCacheUsage: 0.1, models: ['qwen-7b'] };
    await Promise.all([instance('busy', TOKEN), instance('idle', TOKEN), instance('left', AFFINE_TOKEN), instance('right', AFFINE_TOKEN)]);
    await eventually(() => gw.gateway.gate.instances(60).filter((i) => i.load).length === 2, 5000, 'both instances to report load');
  });
  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop('test over')));
    await gw?.close();
  });

  const ask = async (model: string, first = 'hello') => {
    const res = await request(gw.httpUrl)
      .post('/api/adapters/chatapi/chat/completions')
      .set('Authorization', TEST_KEY)
      .send({
        model,
        messages: [
          { role: 'user', content: first },
          { role: 'user', content: 'and then?' },
        ],
      })
      .expect(200);
    return res.body.choices[0].message.content as string;
  };

  it('records what each instance reports', () => {
    const busy = gw.gateway.gate.instances(60).find((i) => i.bootUuid === 'boot-busy')!;
    expect(busy.load).toMatchObject({ inFlight: 3, queueDepth: 6, kvCacheUsage: 0.9, models: ['llama-8b'] });
  });

  it('sends requests to the least loaded instance', async () => {
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await ask('demo/pool'));
    expect(answers).toEqual(Array(6).fill('idle'));
  });

  it('prefers the instance that has the requested model loaded, even when it is busier', async () => {
    expect(await ask('demo/pool/llama-8b')).toBe('busy');
    expect(await ask('demo/pool/qwen-7b')).toBe('idle');
    // A model nobody reports loaded: least loaded again.
    expect(await ask('demo/pool/other')).toBe('idle');
  });

  it('follows the reports as they change', async () => {
    loads.busy = { inFlight: 0, queueDepth: 0 };
    loads.idle = { inFlight: 4, queueDepth: 9 };
    await eventually(
      () => gw.gateway.gate.instances(60).find((i) => i.bootUuid === 'boot-idle')?.load?.queueDepth === 9,
      5000,
      'the new reports',
    );
    expect(await ask('demo/pool')).toBe('busy');
  });

  it('prefix affinity: one conversation prefix keeps one instance; different prefixes spread', async () => {
    const byPrefix = new Map<string, Set<string>>();
    for (let p = 0; p < 8; p++) {
      const prefix = `conversation ${p}`;
      const seen = new Set<string>();
      for (let i = 0; i < 3; i++) seen.add(await ask('demo/affine', prefix));
      byPrefix.set(prefix, seen);
    }
    for (const seen of byPrefix.values()) expect(seen.size).toBe(1);
    const used = new Set([...byPrefix.values()].flatMap((s) => [...s]));
    expect(used).toEqual(new Set(['left', 'right']));
  });
});
