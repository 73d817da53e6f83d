/**
 * The built-in upstream connector against real HTTP engines on loopback: the canned OpenAI- and
 * Anthropic-compatible upstreams of the chat suites, and scripted bad engines (unreachable, garbage,
 * hung, cut off). Judged by the official openai Node SDK and plain HTTP.
 */
import OpenAI from 'openai';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, eventually, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import {
  type ScriptedEngine,
  startAnthropicUpstream,
  startOpenAiUpstream,
  startScriptedEngine as scriptedEngine,
  type Upstream,
} from '../support/upstream.js';
import { freePort } from '../support/ports.js';

const PLUGINS = ['chatapi', 'chatapi-direct', 'sync-predict', 'upstream'];

const service = (id: number, name: string, upstream: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  id,
  name,
  account: 'demo',
  public: true,
  family: 'openai',
  upstream,
  ...extra,
});

describe('upstream connector: an OpenAI-compatible engine', () => {
  let gw: TestGateway;
  let engine: Upstream;
  let client: OpenAI;

  beforeAll(async () => {
    engine = await startOpenAiUpstream();
    process.env.TEST_UPSTREAM_KEY = 'sk-engine-key-123';
    gw = await startTestGateway(
      testConfigInput({
        services: [
          service(20, 'vllm', {
            api: 'openai',
            baseUrl: `${engine.url}/v1`,
            apiKeyEnv: 'TEST_UPSTREAM_KEY',
            models: { small: 'engine-small-v2' },
            defaultModel: 'engine-default',
          }),
        ],
        plugins: { enabled: PLUGINS },
      }),
    );
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await engine?.close();
    delete process.env.TEST_UPSTREAM_KEY;
  });

  it('is one local instance of the service, with no dial-in process', () => {
    expect(gw.gateway.gate.instances(20)).toMatchObject([
      { kind: 'local', state: 'serving', bootUuid: 'upstream:vllm', hostname: expect.stringMatching(/^127\.0\.0\.1:\d+$/) },
    ]);
  });

  it("answers a chat completion, mapping our model name to the engine's and sending the engine key", async () => {
    const completion = await client.chat.completions.create({
      model: 'demo/vllm/small',
      messages: [{ role: 'user', content: 'hello engine' }],
      temperature: 0.3,
    });
    expect(completion.choices[0]!.message.content).toBe('Upstream heard: hello engine');
    const sent = engine.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toMatchObject({ model: 'engine-small-v2', temperature: 0.3, messages: [{ role: 'user', content: 'hello engine' }] });
    expect(sent.headers.authorization).toBe('Bearer sk-engine-key-123');
    // The caller's own key never reaches the engine.
    expect(JSON.stringify(sent.headers)).not.toContain(TEST_KEY);
  });

  it('uses the default engine model when the request names none', async () => {
    await client.chat.completions.create({ model: 'demo/vllm', messages: [{ role: 'user', content: 'x' }] });
    expect(engine.requests.at(-1)!.body.model).toBe('engine-default');
  });

  it('relays a stream chunk by chunk, with usage', async () => {
    const stream = await client.chat.completions.create({
      model: 'demo/vllm/small',
      messages: [{ role: 'user', content: 'stream me' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Upstream heard: stream me');
    expect(chunks.at(-1)!.usage).toMatchObject({ total_tokens: 13 });
  });

  it('serves embeddings (base64, as the Node SDK asks by default) and legacy completions', async () => {
    const embeddings = await client.embeddings.create({ model: 'demo/vllm/small', input: ['a', 'b'] });
    expect(embeddings.data.map((d) => d.embedding)).toEqual([
      [0.5, -0.25, 0],
      [0.5, -0.25, 1],
    ]);
    const completion = await client.completions.create({ model: 'demo/vllm/small', prompt: 'once' });
    expect(completion.choices[0]!.text).toBe(' after once');
  });

  it('passes an engine error on with its status and message', async () => {
    const err = await client.chat.completions
      .create({ model: 'demo/vllm/small', messages: [{ role: 'user', content: 'upstream-error' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.message).toContain('upstream quota exhausted');
  });

  it("serves the direct adapter with the caller's body and sync predict", async () => {
    const direct = await request(gw.httpUrl)
      .post('/api/adapters/chatapi-direct/chat/completions')
      .set('Authorization', `Bearer ${TEST_KEY}`)
      .send({ model: 'demo/vllm/small', messages: [{ role: 'user', content: 'direct' }], seed: 7 })
      .expect(200);
    expect(direct.body.choices[0].message.content).toBe('Upstream heard: direct');
    expect(engine.requests.at(-1)!.body).toMatchObject({ model: 'engine-small-v2', seed: 7 });

    const sync = await request(gw.httpUrl)
      .post('/api/platformgate/account/demo/model/vllm/predict-with-config')
      .set('PLATFORM-API-KEY', TEST_KEY)
      .send({ data: { model: 'small', messages: [{ role: 'user', content: 'sync' }] }, config: { max_tokens: 5 } })
      .expect(200);
    expect(sync.body.choices[0].message.content).toBe('Upstream heard: sync');
    expect(engine.requests.at(-1)!.body).toMatchObject({ model: 'engine-small-v2', max_tokens: 5 });
  });
});

describe('upstream connector: an Anthropic Messages engine', () => {
  let gw: TestGateway;
  let engine: Upstream;

  beforeAll(async () => {
    engine = await startAnthropicUpstream();
    gw = await startTestGateway(
      testConfigInput({
        services: [
          service(21, 'claude', { api: 'anthropic', baseUrl: engine.url, models: { fast: 'claude-fast-1' } }, { family: 'anthropic' }),
        ],
        plugins: { enabled: PLUGINS },
      }),
    );
  });
  afterAll(async () => {
    await gw?.close();
    await engine?.close();
  });

  it('answers and streams Messages through the direct adapter', async () => {
    const body = { model: 'demo/claude/fast', max_tokens: 20, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
    const res = await request(gw.httpUrl)
      .post('/api/adapters/chatapi-direct/v1/chat/completions')
      .set('Authorization', TEST_KEY)
      .send(body)
      .expect(200);
    expect(res.body.content[0].text).toBe('Claude heard: hi');
    expect(engine.requests.at(-1)!.body.model).toBe('claude-fast-1');
    expect(engine.requests.at(-1)!.headers['anthropic-version']).toBe('2023-06-01');

    const streamed = await request(gw.httpUrl)
      .post('/api/adapters/chatapi-direct/v1/chat/completions')
      .set('Authorization', TEST_KEY)
      .send({ ...body, stream: true })
      .expect(200);
    expect(streamed.text).toContain('event: message_stop');
    expect(streamed.text).toContain('"text":"hi"');
  });

  it('refuses OpenAI-format requests with a coded 400 naming the Messages routes, without calling the engine', async () => {
    const client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi/v1`, maxRetries: 0 });
    const before = engine.requests.length;
    const refusals = [
      () => client.chat.completions.create({ model: 'demo/claude/fast', messages: [{ role: 'user', content: 'hi' }] }),
      () => client.chat.completions.create({ model: 'demo/claude/fast', messages: [{ role: 'user', content: 'hi' }], stream: true }),
      () => client.responses.create({ model: 'demo/claude/fast', input: 'hi' }),
      () => client.embeddings.create({ model: 'demo/claude/fast', input: 'hi' }),
    ];
    for (const refused of refusals) {
      const err = (await refused().then(
        () => undefined,
        (e: unknown) => e,
      )) as InstanceType<typeof OpenAI.APIError>;
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.code).toBe('UPSTREAM_FORMAT_MISMATCH');
      expect(err.message).toContain('/api/adapters/chatapi/v1/messages');
      expect(err.headers?.get('x-should-retry')).toBe('false');
    }
    expect(engine.requests.length).toBe(before);
  });
});

describe('upstream connector: bad engines', () => {
  let gw: TestGateway;
  let hung: ScriptedEngine;
  let garbage: ScriptedEngine;
  let cut: ScriptedEngine;
  let slow: ScriptedEngine;
  let health: ScriptedEngine;
  let huge: ScriptedEngine;
  let hugeSse: ScriptedEngine;
  let hugeBytesSent = 0;
  let healthy = false;
  let client: OpenAI;
  const chat = (name: string) => ({ model: `demo/${name}`, messages: [{ role: 'user' as const, content: 'hi' }] });
  const streamed = (name: string) => ({ ...chat(name), stream: true as const });

  beforeAll(async () => {
    hung = await scriptedEngine(() => undefined);
    garbage = await scriptedEngine((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('<html>not an answer</html>');
    });
    cut = await scriptedEngine((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'partial' }, logprobs: null, finish_reason: null }] })}\n\n`,
      );
      setTimeout(() => res.end(), 20);
    });
    slow = await scriptedEngine((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const tick = setInterval(
        () =>
          res.write(
            `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'tick ' }, logprobs: null, finish_reason: null }] })}\n\n`,
          ),
        20,
      );
      res.on('close', () => clearInterval(tick));
    });
    health = await scriptedEngine((req, res) => {
      if (req.url === '/v1/models') res.writeHead(healthy ? 200 : 503).end('{}');
      else
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            created: 1,
            model: 'm',
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: 'healthy answer', refusal: null },
                logprobs: null,
                finish_reason: 'stop',
              },
            ],
          }),
        );
    });
    // A 200 that never ends: 64 KiB pieces of one JSON string (or of one SSE data line) for as long
    // as the connection is open, counted in hugeBytesSent.
    const endless = (contentType: string, head: string) => (_req: unknown, res: import('node:http').ServerResponse) => {
      res.writeHead(200, { 'content-type': contentType });
      res.write(head);
      const piece = 'a'.repeat(64 * 1024);
      const more = () => {
        while (!res.destroyed && hugeBytesSent < 256 * 1024 * 1024) {
          hugeBytesSent += piece.length;
          if (!res.write(piece)) return void res.once('drain', more);
        }
      };
      more();
    };
    huge = await scriptedEngine(endless('application/json', '{"id":"x","object":"chat.completion","choices":[{"message":{"content":"'));
    hugeSse = await scriptedEngine(
      endless('text/event-stream', 'data: {"id":"x","object":"chat.completion.chunk","choices":[{"delta":{"content":"'),
    );
    const down = await freePort();
    gw = await startTestGateway(
      testConfigInput({
        services: [
          service(30, 'down', { api: 'openai', baseUrl: `http://127.0.0.1:${down}/v1`, defaultModel: 'm', connectTimeoutMs: 2000 }),
          service(31, 'garbage', { api: 'openai', baseUrl: garbage.url, defaultModel: 'm' }),
          service(32, 'hung', { api: 'openai', baseUrl: hung.url, defaultModel: 'm', firstByteTimeoutMs: 300 }),
          service(33, 'hung-deadline', { api: 'openai', baseUrl: hung.url, defaultModel: 'm' }, { timeoutSec: 0.3 }),
          service(34, 'cut', { api: 'openai', baseUrl: cut.url, defaultModel: 'm' }),
          service(35, 'slow', { api: 'openai', baseUrl: slow.url, defaultModel: 'm' }),
          service(36, 'checked', {
            api: 'openai',
            baseUrl: health.url,
            defaultModel: 'm',
            healthCheck: { path: '/models', intervalMs: 100 },
          }),
          service(37, 'huge', { api: 'openai', baseUrl: huge.url, defaultModel: 'm' }),
          service(38, 'huge-sse', { api: 'openai', baseUrl: hugeSse.url, defaultModel: 'm' }),
        ],
        gate: { maxAnswerBytes: 1024 * 1024 },
        plugins: { enabled: PLUGINS },
      }),
    );
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all([hung, garbage, cut, slow, health, huge, hugeSse].map((e) => e?.close()));
  });

  const inFlight = () => gw.gateway.gate.instances().reduce((n, i) => n + i.inFlight, 0);

  it("unreachable: 503 SERVICE_UNAVAILABLE (the chat adapters' one outage code) with Retry-After, naming the cause", async () => {
    const res = await request(gw.httpUrl)
      .post('/api/adapters/chatapi/chat/completions')
      .set('Authorization', TEST_KEY)
      .send(chat('down'))
      .expect(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', type: 'api_error' });
    expect(res.body.error.message).toContain('ECONNREFUSED');
    expect(inFlight()).toBe(0);
  });

  it('garbage: 502 SERVICE_BAD_RESPONSE', async () => {
    const res = await request(gw.httpUrl)
      .post('/api/adapters/chatapi/chat/completions')
      .set('Authorization', TEST_KEY)
      .send(chat('garbage'))
      .expect(502);
    expect(res.body.error.code).toBe('SERVICE_BAD_RESPONSE');
    expect(inFlight()).toBe(0);
  });

  it('an answer past gate.maxAnswerBytes: 502 SERVICE_ANSWER_TOO_LARGE, the engine request closed early, nothing held', async () => {
    const res = await request(gw.httpUrl)
      .post('/api/adapters/chatapi/chat/completions')
      .set('Authorization', TEST_KEY)
      .send(chat('huge'))
      .expect(502);
    expect(res.body.error).toMatchObject({ code: 'SERVICE_ANSWER_TOO_LARGE' });
    expect(res.body.error.message).toContain(String(1024 * 1024));
    await eventually(() => huge.closed.length === 1, 3000, 'the engine request to be closed');
    // The connector stopped reading at the limit, not at the engine's 256 MiB.
    expect(hugeBytesSent).toBeLessThan(32 * 1024 * 1024);
    expect(inFlight()).toBe(0);
  });

  it('the same for a streamed request: one endless JSON document, or one SSE event that never ends', async () => {
    for (const [name, engine] of [
      ['huge', huge],
      ['huge-sse', hugeSse],
    ] as const) {
      hugeBytesSent = 0;
      const closedBefore = engine.closed.length;
      const res = await request(gw.httpUrl)
        .post('/api/adapters/chatapi/chat/completions')
        .set('Authorization', TEST_KEY)
        .send(streamed(name));
      expect(res.status, name).toBe(502);
      expect(JSON.parse(res.text).error.code, name).toBe('SERVICE_ANSWER_TOO_LARGE');
      await eventually(() => engine.closed.length === closedBefore + 1, 3000, `the ${name} request to be closed`);
      expect(hugeBytesSent, name).toBeLessThan(32 * 1024 * 1024);
    }
    expect(inFlight()).toBe(0);
  });

  // "Closed" from the engine's side: the request's response closed without being answered. (An
  // undici pool may open a fresh idle connection after a destroyed one; that one carries nothing.)
  it('hung: 504 at the first-byte deadline, and the engine request is closed', async () => {
    const before = hung.closed.length;
    const res = await request(gw.httpUrl)
      .post('/api/adapters/chatapi/chat/completions')
      .set('Authorization', TEST_KEY)
      .send(chat('hung'))
      .expect(504);
    expect(res.body.error.code).toBe('UPSTREAM_TIMEOUT');
    await eventually(() => hung.closed.length === before + 1, 3000, 'the hung request to close');
    expect(inFlight()).toBe(0);
  });

  it('hung: 504 at the service deadline, and the engine request is closed', async () => {
    const before = hung.closed.length;
    const res = await request(gw.httpUrl)
      .post('/api/adapters/chatapi/chat/completions')
      .set('Authorization', TEST_KEY)
      .send(chat('hung-deadline'))
      .expect(504);
    expect(res.body.error.code).toBe('PREDICT_TIMEOUT');
    await eventually(() => hung.closed.length === before + 1, 3000, 'the hung request to close');
    expect(inFlight()).toBe(0);
  });

  it('a stream cut off before [DONE] is an error, not a complete answer', async () => {
    const stream = await client.chat.completions.create(streamed('cut'));
    let text = '';
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((e) => e);
    expect(text).toBe('partial');
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(String(err.message)).toContain('ended its stream before its terminal event ([DONE])');
    expect(err.code ?? err.error?.code).toBe('STREAM_CUT_OFF');
  });

  it('a caller that goes away mid-stream stops the engine request', async () => {
    const controller = new AbortController();
    const stream = await client.chat.completions.create(streamed('slow'), { signal: controller.signal });
    let chunks = 0;
    await (async () => {
      for await (const _chunk of stream) if (++chunks === 3) controller.abort();
    })().catch(() => undefined);
    await eventually(() => slow.closed.length === 1, 3000, 'the engine request to be closed');
    await eventually(() => inFlight() === 0, 3000, 'the call to be released');
  });

  it('health check: no instance while the engine fails it, serving once it passes', async () => {
    // No instance on the chat adapter: 503 with Retry-After, which the OpenAI SDKs retry.
    const res = await request(gw.httpUrl)
      .post('/api/adapters/chatapi/chat/completions')
      .set('Authorization', TEST_KEY)
      .send(chat('checked'));
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
    healthy = true;
    await eventually(() => gw.gateway.gate.instances(36)[0]?.state === 'serving', 3000, 'the instance to serve');
    const ok = await client.chat.completions.create(chat('checked'));
    expect(ok.choices[0]!.message.content).toBe('healthy answer');
    healthy = false;
    await eventually(() => gw.gateway.gate.instances(36)[0]?.state === 'draining', 3000, 'the instance to leave routing');
  });
});
