/**
 * One code for an engine outage (issue 30): callers of the chat adapters whose HTTP engine is stopped
 * get 503 SERVICE_UNAVAILABLE with Retry-After at both moments, first while the engine is still in
 * routing (the connection is refused: it was 502 UPSTREAM_UNREACHABLE) and then once its health check
 * has taken it out (no instance), with the moment named in the message. Real gateway on loopback, a
 * real HTTP engine that is stopped, the official OpenAI and Anthropic SDKs, streamed and whole.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, eventually, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { startOpenAiUpstream, type Upstream } from '../support/upstream.js';

const SERVICE_ID = 41;

describe('an engine outage on the chat adapters', () => {
  let gw: TestGateway;
  let engine: Upstream;
  let openai: OpenAI;
  let anthropic: Anthropic;
  /** Instances of the service in routing. */
  const serving = () => gw.gateway.gate.instances(SERVICE_ID).filter((i) => i.state === 'serving').length;

  beforeAll(async () => {
    engine = await startOpenAiUpstream();
    gw = await startTestGateway(
      testConfigInput({
        services: [
          {
            id: SERVICE_ID,
            name: 'engine',
            account: 'demo',
            public: true,
            family: 'openai',
            // Three failed probes 400 ms apart: the first moment (engine stopped, still in routing) lasts over a second.
            upstream: {
              api: 'openai',
              baseUrl: `${engine.url}/v1`,
              defaultModel: 'm',
              healthCheck: { path: '/models', intervalMs: 400, timeoutMs: 200, failuresBeforeDown: 3 },
            },
          },
        ],
        plugins: { enabled: ['chatapi', 'chatapi-direct', 'upstream'] },
      }),
    );
    openai = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi`, maxRetries: 0 });
    await eventually(() => serving() === 1, 5000, 'the engine to pass its first health check');
  });
  afterAll(async () => {
    await gw?.close();
    await engine?.close();
  });

  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hi' }];

  /** Every adapter path a caller may take, each answering the error the SDK threw. */
  const calls = {
    chat: () => openai.chat.completions.create({ model: 'demo/engine', messages }),
    'chat streamed': async () => {
      for await (const chunk of await openai.chat.completions.create({ model: 'demo/engine', messages, stream: true })) void chunk;
    },
    responses: () => openai.responses.create({ model: 'demo/engine', input: 'hi' }),
    messages: () => anthropic.messages.create({ model: 'demo/engine', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    'messages streamed': async () => {
      for await (const event of await anthropic.messages.create({
        model: 'demo/engine',
        max_tokens: 16,
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      }))
        void event;
    },
  };

  async function expectOutage(reason: RegExp): Promise<void> {
    for (const [path, call] of Object.entries(calls)) {
      const err = (await call().then(
        () => undefined,
        (e: unknown) => e,
      )) as { status?: number; headers?: Headers | Record<string, string>; error?: any } | undefined;
      expect(err, path).toBeDefined();
      expect(err!.status, path).toBe(503);
      const headers = err!.headers instanceof Headers ? Object.fromEntries(err!.headers) : (err!.headers ?? {});
      expect(headers['retry-after'], path).toBe('1');
      const body = err!.error?.error ?? err!.error;
      expect(body?.code ?? body?.type, path).toMatch(/^(SERVICE_UNAVAILABLE|api_error)$/);
      expect(body?.message, path).toMatch(reason);
    }
  }

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After while the stopped engine is in routing, then once health has taken it out', async () => {
    expect((await openai.chat.completions.create({ model: 'demo/engine', messages })).choices[0]!.message.content).toBe(
      'Upstream heard: hi',
    );
    await engine.close();

    // Moment 1: still in routing; the connection is refused.
    expect(serving()).toBe(1);
    await expectOutage(/unavailable right now: its engine cannot be reached \(ECONNREFUSED\)/);
    expect(serving(), 'the first moment was over before its checks ran').toBe(1);

    // Moment 2: failed health checks took it out of routing.
    await eventually(() => serving() === 0, 10_000, 'the health check to take the engine out');
    await expectOutage(/unavailable right now: no instance is in routing/);
  });

  it('is the error class the OpenAI SDK retries (5xx), with the code in the body', async () => {
    const err = await openai.chat.completions.create({ model: 'demo/engine', messages }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('SERVICE_UNAVAILABLE');
  });
});
