/**
 * An engine that breaks a stream must not fail the next request to it (issue 30). llama.cpp's Python
 * server (llama-cpp-python 0.3, uvicorn) fails a prompt over its context window after its 200
 * headers: it ends the chunked body cleanly, with no `[DONE]`, then closes the connection. undici had
 * already put that connection back as idle, so the next request went out on it and got 503
 * ECONNRESET, or, while the server held the connection open without reading it, no answer until
 * its deadline (seen against the real engine: ECONNRESET, then a 10 s PREDICT_TIMEOUT). The engine
 * here does the same on loopback, with one connection so the next request would reuse it.
 */
import type { Socket } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { startScriptedEngine, type ScriptedEngine } from '../support/upstream.js';

const chunk = (content: string) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

describe('upstream connector: the request after a broken stream', () => {
  let engine: ScriptedEngine;
  let gw: TestGateway;
  let client: OpenAI;
  /** Connections whose stream broke, and what the engine does with a request that still arrives on one. */
  const broken = new Map<Socket, 'reset' | 'ignore'>();

  beforeAll(async () => {
    engine = await startScriptedEngine((req, res, body) => {
      const after = broken.get(req.socket);
      if (after === 'reset') return req.socket.destroy();
      if (after === 'ignore') return;
      const text = String(body.messages.at(-1).content);
      if (body.stream && (text === 'reset' || text === 'ignore')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk('half an ans'));
        // The body ends without [DONE]: the stream broke, and the connection is dead from here on.
        res.end();
        broken.set(req.socket, text);
        return;
      }
      const answer = {
        id: 'c2',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [
          { index: 0, message: { role: 'assistant', content: `heard ${text}`, refusal: null }, logprobs: null, finish_reason: 'stop' },
        ],
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
    gw = await startTestGateway(
      testConfigInput({
        services: [
          // One connection: the request after the broken stream would have to reuse it. A short
          // deadline, so a request sent on the wedged connection fails in seconds, not minutes.
          {
            id: 70,
            name: 'breaker',
            account: 'demo',
            public: true,
            family: 'openai',
            timeoutSec: 5,
            upstream: { api: 'openai', baseUrl: engine.url, defaultModel: 'm', maxConcurrency: 1 },
          },
        ],
        plugins: { enabled: ['chatapi', 'upstream'] },
      }),
    );
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await engine?.close();
  });

  const breakStream = async (how: 'reset' | 'ignore') => {
    const stream = await client.chat.completions.create({
      model: 'demo/breaker',
      messages: [{ role: 'user', content: how }],
      stream: true,
    });
    let text = '';
    const failure = await (async () => {
      for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    })().catch((err: unknown) => err);
    expect(text).toBe('half an ans');
    // The caller learns that the answer is incomplete, never takes it for a whole one.
    expect(String(failure)).toContain('ended its stream before its terminal event');
  };

  it.each(['reset', 'ignore'] as const)('answers the next request after a stream broke and its connection was left to %s', async (how) => {
    await client.chat.completions.create({ model: 'demo/breaker', messages: [{ role: 'user', content: 'warm' }] });
    await breakStream(how);
    const next = await client.chat.completions.create({ model: 'demo/breaker', messages: [{ role: 'user', content: 'after' }] });
    expect(next.choices[0]!.message.content).toBe('heard after');
    const streamed = await client.chat.completions.create({
      model: 'demo/breaker',
      messages: [{ role: 'user', content: 'after' }],
      stream: false,
    });
    expect(streamed.choices[0]!.message.content).toBe('heard after');
  });
});
