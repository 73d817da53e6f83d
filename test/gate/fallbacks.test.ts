/**
 * Fallbacks across services: a service's configured `fallbacks` and a request's `models: [...]`, over
 * a failing and a healthy engine (upstream connector instances on loopback). Retries happen only
 * before the first byte of an answer, only for failures a retry may fix, and the answer says who
 * served it (`x-served-by`, and `model` for a fallback).
 */
import OpenAI from 'openai';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { startOpenAiUpstream, startScriptedEngine, type ScriptedEngine, type Upstream } from '../support/upstream.js';

const chunk = (content: string) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }] })}\n\n`;

describe('fallbacks and retries', () => {
  let gw: TestGateway;
  let healthy: Upstream;
  let failing: ScriptedEngine;
  let client: OpenAI;
  const upstream = (baseUrl: string) => ({ api: 'openai', baseUrl, defaultModel: 'm', models: { small: 'engine-small' } });
  const svc = (id: number, name: string, extra: Record<string, unknown>) => ({
    id,
    name,
    account: 'demo',
    public: true,
    family: 'openai',
    ...extra,
  });

  beforeAll(async () => {
    healthy = await startOpenAiUpstream();
    // By the last user message: `overloaded` 503, `limited` 429, `bad` 400, `stream-then-fail` one chunk then a reset.
    failing = await startScriptedEngine((_req, res, body) => {
      const text = body.messages.at(-1).content;
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      if (text === 'limited') return json(429, { error: { message: 'slow down', type: 'rate_limit_error' } });
      if (text === 'bad') return json(400, { error: { message: 'bad request to the engine', type: 'invalid_request_error' } });
      if (text === 'stream-then-fail') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk('first '));
        setTimeout(() => res.destroy(), 20);
        return;
      }
      json(503, { error: { message: 'engine overloaded', type: 'server_error' } });
    });
    gw = await startTestGateway(
      testConfigInput({
        services: [
          svc(50, 'primary', { upstream: upstream(failing.url), fallbacks: ['demo/empty', 'demo/backup/small'] }),
          svc(51, 'backup', { upstream: upstream(`${healthy.url}/v1`) }),
          // A slot no instance has dialled into.
          svc(52, 'empty', { connectionTokens: [{ token: 'empty-service-token-01' }] }),
          svc(53, 'lonely', { upstream: upstream(failing.url) }),
          // No instance ever: its requests (async tasks included) go to its fallback.
          svc(54, 'orphan', { connectionTokens: [{ token: 'orphan-service-token-1' }], fallbacks: ['demo/backup/small'] }),
        ],
        plugins: { enabled: ['chatapi', 'sync-predict', 'async-predict', 'upstream'] },
      }),
    );
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await healthy?.close();
    await failing?.close();
  });

  const ask = (model: string, content: string, extra: Record<string, unknown> = {}) =>
    request(gw.httpUrl)
      .post('/api/adapters/chatapi/chat/completions')
      .set('Authorization', TEST_KEY)
      .send({ model, messages: [{ role: 'user', content }], ...extra });

  it('a 5xx moves the request along the configured chain, past a service with no instance', async () => {
    const before = healthy.requests.length;
    const res = await ask('demo/primary', 'overloaded').expect(200);
    expect(res.body.choices[0].message.content).toBe('Upstream heard: overloaded');
    expect(res.body.model).toBe('demo/backup/small');
    expect(res.headers['x-served-by']).toMatch(/^demo\/backup\/small; instance=upstream:backup$/);
    expect(healthy.requests.length).toBe(before + 1);
    expect(healthy.requests.at(-1)!.body.model).toBe('engine-small');
  });

  it('a 429 is retried too', async () => {
    const res = await ask('demo/primary', 'limited').expect(200);
    expect(res.headers['x-served-by']).toMatch(/^demo\/backup\/small;/);
  });

  it('a caller mistake (4xx) is not retried', async () => {
    const before = healthy.requests.length;
    const res = await ask('demo/primary', 'bad').expect(400);
    expect(res.body.error.message).toContain('bad request to the engine');
    expect(healthy.requests.length).toBe(before);
  });

  it('a stream is never retried after its first byte', async () => {
    const before = healthy.requests.length;
    const stream = await client.chat.completions.create({
      model: 'demo/primary',
      messages: [{ role: 'user', content: 'stream-then-fail' }],
      stream: true,
    });
    let text = '';
    const err = await (async () => {
      for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    })().catch((e) => e);
    expect(text).toBe('first ');
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(healthy.requests.length).toBe(before);
  });

  it("a request's models: [...] chain applies to a service without configured fallbacks", async () => {
    const completion = await client.chat.completions.create({
      model: 'demo/lonely',
      messages: [{ role: 'user', content: 'overloaded' }],
      // @ts-expect-error OpenRouter's `models` is not in the OpenAI SDK's types
      models: ['demo/empty', 'demo/backup'],
    });
    expect(completion.model).toBe('demo/backup');
    expect(completion.choices[0]!.message.content).toBe('Upstream heard: overloaded');
    // The engine's default model, not the failed service's: the fallback named none.
    expect(healthy.requests.at(-1)!.body.model).toBe('m');
    expect(healthy.requests.at(-1)!.body.models).toBeUndefined();
  });

  it('without fallbacks the failure reaches the caller', async () => {
    const res = await ask('demo/lonely', 'overloaded').expect(503);
    expect(res.body.error.message).toContain('engine overloaded');
  });

  it('sync predict falls back the same way and names who served', async () => {
    const res = await request(gw.httpUrl)
      .post('/api/platformgate/account/demo/model/primary/predict-with-config')
      .set('PLATFORM-API-KEY', TEST_KEY)
      .send({ data: { messages: [{ role: 'user', content: 'overloaded' }] }, config: {} })
      .expect(200);
    expect(res.body.choices[0].message.content).toBe('Upstream heard: overloaded');
    expect(res.headers['x-served-by']).toMatch(/^demo\/backup\/small;/);
  });

  it('the first service that answers is named as itself, not as a fallback', async () => {
    const res = await ask('demo/backup', 'direct hit').expect(200);
    expect(res.headers['x-served-by']).toMatch(/^demo\/backup; instance=upstream:/);
    expect(res.body.model).toBe('m');
  });

  it('an async task for a service with no instance is claimed and answered by its fallback', async () => {
    const created = await request(gw.httpUrl)
      .post('/api/platformgateway/account/demo/model/orphan/async/predict')
      .set('PLATFORM-API-KEY', TEST_KEY)
      .send({ messages: [{ role: 'user', content: 'queued' }] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const taskId = created.body as string;
    let answer: request.Response | undefined;
    for (let i = 0; i < 100; i++) {
      answer = await request(gw.httpUrl)
        .get(`/api/platformgateway/account/demo/async/task/${taskId}/response`)
        .set('PLATFORM-API-KEY', TEST_KEY);
      if (answer.status !== 204) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(answer!.status).toBe(200);
    expect(answer!.body.choices[0].message.content).toBe('Upstream heard: queued');
    expect(healthy.requests.at(-1)!.body.model).toBe('engine-small');
  });
});
