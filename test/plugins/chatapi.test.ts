import http from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayError } from '../../core/errors.js';
import { echoAnswer } from '../../examples/echo-service/echo.js';
import {
  BLOCKED_KEY,
  OTHER_ACCOUNT_KEY,
  READ_ONLY_KEY,
  TEST_KEY,
  eventually,
  startTestGateway,
  type TestGateway,
} from '../support/gateway.js';
import { CHAT_TOKENS, LIMITED_KEY, chatConfigInput, rawPost, sseData } from '../support/chat.js';
import { RawServiceError, sleep, startRawModel, type RawModel } from '../support/raw-model.js';

const CHAT = '/api/adapters/chatapi/chat/completions';
const auth = { Authorization: `Bearer ${TEST_KEY}` };

describe('standard chat adapter over raw HTTP', () => {
  let gw: TestGateway;
  let echo: RawModel;
  let faulty: RawModel;
  /** What the faulty service does with the next request, by the last user message. */
  const faults: Record<string, (req: any) => unknown> = {
    'fail-now': () => {
      throw new RawServiceError('model.overloaded', 'the model is overloaded', 503);
    },
    'fail-mid-stream': () =>
      (async function* () {
        yield {
          id: 'c1',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'm',
          choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
        };
        throw new RawServiceError('model.crashed', 'the model crashed mid-stream', 500);
      })(),
    'slow-first': () =>
      (async function* () {
        await sleep(1500);
        yield { id: 'late' };
      })(),
    'stall-mid-stream': () =>
      (async function* () {
        yield {
          id: 'c1',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'm',
          choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
        };
        await sleep(1500);
        yield { id: 'c1' };
      })(),
    endless: () =>
      (async function* () {
        for (let i = 0; ; i++) {
          yield {
            id: 'c1',
            object: 'chat.completion.chunk',
            created: 1,
            model: 'm',
            choices: [{ index: 0, delta: { content: `${i} ` }, finish_reason: null }],
          };
          await sleep(20);
        }
      })(),
    bare: () => ({
      choices: [{ index: 0, message: { role: 'assistant', content: 'no ids here', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    }),
    'pretty-stream': () =>
      (async function* () {
        yield '{\n  "id": "p1",\n  "object": "chat.completion.chunk",\n  "created": 1,\n  "model": "m",\n  "choices": []\n}';
      })(),
  };

  beforeAll(async () => {
    gw = await startTestGateway(chatConfigInput({ chatapi: { firstChunkTimeoutMs: 800, idleTimeoutMs: 800 } }));
    echo = await startRawModel(gw.grpcAddress, CHAT_TOKENS.echo, (req) => echoAnswer(req.data, req.config));
    faulty = await startRawModel(gw.grpcAddress, CHAT_TOKENS.faulty, (req) => {
      const last = req.data.messages?.at(-1)?.content ?? req.data.prompt;
      const fault = faults[String(last)];
      return fault ? fault(req) : echoAnswer(req.data, req.config);
    });
  });
  afterAll(async () => {
    echo?.close();
    faulty?.close();
    await gw?.close();
  });

  const chat = (extra: Record<string, unknown> = {}) => ({
    model: 'demo/echo',
    messages: [{ role: 'user', content: 'hello there' }],
    ...extra,
  });

  it('answers a chat completion with the service answer and a request id', async () => {
    const res = await request(gw.httpUrl).post(CHAT).set(auth).send(chat());
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(res.body).toMatchObject({
      object: 'chat.completion',
      model: 'echo-1',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Echo: hello there' }, finish_reason: 'stop' }],
    });
  });

  it('splits the body: model, messages and stream are data, every other field is config', async () => {
    const before = echo.requests.length;
    const res = await request(gw.httpUrl)
      .post(CHAT)
      .set(auth)
      .send(
        chat({
          model: 'demo/echo/echo-2',
          stream: false,
          temperature: 0.5,
          max_tokens: 7,
          tools: [{ type: 'function', function: { name: 'f' } }],
        }),
      );
    expect(res.status).toBe(200);
    const got = echo.requests[before]!;
    expect(got.data).toEqual({ model: 'echo-2', messages: [{ role: 'user', content: 'hello there' }], stream: false });
    expect(got.config).toEqual({ temperature: 0.5, max_tokens: 7, tools: [{ type: 'function', function: { name: 'f' } }] });
    expect(got.dataType).toMatch(/\/specs\/gpt\.json#\/ChatCompletionRequest$/);
    expect(got.configType).toMatch(/\/specs\/gpt\.json#\/ChatCompletionConfig$/);
    expect(got.headers['Z-requestId']).toBe(res.headers['x-request-id']);
    expect(got.headers['Z-callerAccountId']).toBe('1');
  });

  it('forwards the service default model when the id has no third part, and sends {} as config', async () => {
    const before = echo.requests.length;
    await request(gw.httpUrl).post(CHAT).set(auth).send(chat()).expect(200);
    expect(echo.requests[before]!.data.model).toBe('echo-1');
    expect(echo.requests[before]!.config).toEqual({});
  });

  it('refuses a config field outside the registry bounds of the named model with 400 naming it, before dispatch', async () => {
    const before = echo.requests.length;
    const hot = await request(gw.httpUrl)
      .post(CHAT)
      .set(auth)
      .send(chat({ model: 'demo/echo/echo-1', temperature: 3 }));
    expect(hot.status).toBe(400);
    expect(hot.body.error).toMatchObject({ code: 'PARAMETER_OUT_OF_RANGE', type: 'invalid_request_error', param: 'temperature' });
    // Without a third part the service's default model (echo-1) applies.
    const none = await request(gw.httpUrl)
      .post(CHAT)
      .set(auth)
      .send(chat({ max_tokens: 0 }));
    expect(none.status).toBe(400);
    expect(none.body.error).toMatchObject({ param: 'max_tokens' });
    expect(echo.requests.length).toBe(before);
    // echo-2 sets no bounds: the third part selects the registry model.
    expect(
      (
        await request(gw.httpUrl)
          .post(CHAT)
          .set(auth)
          .send(chat({ model: 'demo/echo/echo-2', temperature: 3 }))
      ).status,
    ).toBe(200);
  });

  it('hands pipeline.validateConfig the service, the config and the model of the id', async () => {
    const seen: unknown[] = [];
    gw.gateway.pipeline.addValidator({
      validate(service, config, modelName) {
        seen.push({ service: service.name, config, modelName });
        if ((config as Record<string, unknown>).user === 'banned')
          throw gatewayError('VALIDATION_FAILED', { param: 'user', args: { reason: 'banned user' } });
      },
    });
    await request(gw.httpUrl)
      .post(CHAT)
      .set(auth)
      .send(chat({ model: 'demo/echo/echo-2', top_p: 0.5 }))
      .expect(200);
    await request(gw.httpUrl)
      .post(CHAT)
      .set(auth)
      .send(chat({ top_p: 0.5 }))
      .expect(200);
    expect(seen).toEqual([
      { service: 'echo', config: { top_p: 0.5 }, modelName: 'echo-2' },
      { service: 'echo', config: { top_p: 0.5 }, modelName: undefined },
    ]);
    const banned = await request(gw.httpUrl)
      .post(CHAT)
      .set(auth)
      .send(chat({ user: 'banned' }));
    expect(banned.status).toBe(400);
    expect(banned.body.error.param).toBe('user');
  });

  it('accepts the key as Bearer (any case), raw, x-api-key and PLATFORM-API-KEY', async () => {
    for (const headers of [
      { Authorization: `bearer ${TEST_KEY}` },
      { Authorization: TEST_KEY },
      { 'x-api-key': TEST_KEY },
      { 'PLATFORM-API-KEY': TEST_KEY },
    ]) {
      const res = await request(gw.httpUrl).post(CHAT).set(headers).send(chat());
      expect(res.status, JSON.stringify(headers)).toBe(200);
    }
  });

  it('serves every route also under /v1', async () => {
    const res = await request(gw.httpUrl).post('/api/adapters/chatapi/v1/chat/completions').set(auth).send(chat());
    expect(res.status).toBe(200);
  });

  it('answers errors in the one envelope with OpenAI types and x-should-retry where retrying cannot help', async () => {
    const cases: [Record<string, string>, unknown, number, string, string][] = [
      [{}, chat(), 401, 'API_KEY_MISSING', 'authentication_error'],
      [{ Authorization: 'Bearer nope' }, chat(), 401, 'API_KEY_INVALID', 'authentication_error'],
      [{ Authorization: BLOCKED_KEY }, chat(), 402, 'ACCOUNT_BLOCKED', 'permission_error'],
      [{ Authorization: READ_ONLY_KEY }, chat(), 403, 'TOKEN_PERMISSION_REQUIRED', 'permission_error'],
      // A private service of another account is as unknown to the key as a missing one.
      [{ Authorization: OTHER_ACCOUNT_KEY }, chat({ model: 'demo/private' }), 404, 'MODEL_NOT_FOUND', 'not_found_error'],
      [auth, chat({ model: 'nobody/echo' }), 404, 'MODEL_NOT_FOUND', 'not_found_error'],
      [auth, chat({ model: 'demo/nothing' }), 404, 'MODEL_NOT_FOUND', 'not_found_error'],
      [auth, chat({ model: 'no-slash' }), 404, 'MODEL_NOT_FOUND', 'not_found_error'],
      [auth, { model: 'demo/echo' }, 400, 'VALIDATION_FAILED', 'invalid_request_error'],
      [auth, chat({ messages: [{ content: 'no role' }] }), 400, 'VALIDATION_FAILED', 'invalid_request_error'],
    ];
    for (const [headers, body, status, code, type] of cases) {
      const res = await request(gw.httpUrl)
        .post(CHAT)
        .set(headers)
        .send(body as object);
      expect(res.status, code).toBe(status);
      expect(res.body.error, code).toMatchObject({ code, type });
      expect(res.headers['x-request-id']).toBeTruthy();
      if (status !== 400) expect(res.headers['x-should-retry'], code).toBe('false');
    }
    const missing = await request(gw.httpUrl).post(CHAT).set(auth).send({ model: 'demo/echo' });
    expect(missing.body.error.param).toBe('messages');
    const noRole = await request(gw.httpUrl)
      .post(CHAT)
      .set(auth)
      .send(chat({ messages: [{ content: 'x' }] }));
    expect(noRole.body.error.param).toBe('messages[0].role');
    const malformed = await request(gw.httpUrl).post(CHAT).set(auth).set('content-type', 'application/json').send('{"model":');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('MALFORMED_JSON');
  });

  it('answers 429 over the account rate, and service errors with their status', async () => {
    const limited = { Authorization: `Bearer ${LIMITED_KEY}` };
    await request(gw.httpUrl).post(CHAT).set(limited).send(chat());
    const res = await request(gw.httpUrl).post(CHAT).set(limited).send(chat());
    expect(res.status).toBe(429);
    expect(res.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', type: 'rate_limit_error' });

    const failed = await request(gw.httpUrl)
      .post(CHAT)
      .set(auth)
      .send(chat({ model: 'demo/faulty', messages: [{ role: 'user', content: 'fail-now' }] }));
    expect(failed.status).toBe(503);
    expect(failed.body.error).toMatchObject({ code: 'model.overloaded', message: 'the model is overloaded', type: 'api_error' });
  });

  it('fills id, object, created and model when the service leaves them out', async () => {
    const res = await request(gw.httpUrl)
      .post(CHAT)
      .set(auth)
      .send(chat({ model: 'demo/faulty', messages: [{ role: 'user', content: 'bare' }] }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: `chatcmpl-${res.headers['x-request-id']}`, object: 'chat.completion', model: 'demo/faulty' });
    expect(typeof res.body.created).toBe('number');
  });

  it('serves models/{id} for ids with raw slashes and with %2F, under both bases', async () => {
    for (const path of [
      '/api/adapters/chatapi/models/demo/echo/echo-1',
      '/api/adapters/chatapi/v1/models/demo%2Fecho%2Fecho-1',
      '/api/adapters/chatapi/models/demo%2Fecho',
    ]) {
      const res = await request(gw.httpUrl).get(path).set(auth);
      expect(res.status, path).toBe(200);
      expect(res.body.object).toBe('model');
      expect(res.body.id).toBe(decodeURIComponent(path.replace(/^.*\/models\//, '')));
    }
    const list = await request(gw.httpUrl).get('/api/adapters/chatapi/v1/models').set(auth);
    expect(list.body.object).toBe('list');
    expect(list.body.data).toContainEqual({
      id: 'demo/echo/echo-1',
      object: 'model',
      created: Date.parse('2026-01-01T00:00:00Z') / 1000,
      owned_by: 'demo',
    });
    expect((await request(gw.httpUrl).get('/api/adapters/chatapi/models')).status).toBe(401);
    const unknown = await request(gw.httpUrl).get('/api/adapters/chatapi/models/demo/echo/nope').set(auth);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'MODEL_NOT_FOUND', type: 'not_found_error' });
  });

  describe('streaming', () => {
    it('writes each chunk as one data: line, then data: [DONE], then closes', async () => {
      const res = await rawPost(gw.httpUrl + CHAT, chat({ stream: true }), auth);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['x-request-id']).toBeTruthy();
      expect(res.text).not.toMatch(/^(event|id|retry):/m);
      const events = sseData(res.text);
      expect(events.at(-1)).toBe('[DONE]');
      const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
      expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
      expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
      expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe('Echo: hello there');
      expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    });

    it('passes the usage chunk through when stream_options.include_usage is set', async () => {
      const res = await rawPost(gw.httpUrl + CHAT, chat({ stream: true, stream_options: { include_usage: true } }), auth);
      const chunks = sseData(res.text)
        .slice(0, -1)
        .map((e) => JSON.parse(e));
      expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
      expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } });
    });

    it('keeps a pretty-printed chunk on one data line', async () => {
      const res = await rawPost(
        gw.httpUrl + CHAT,
        chat({ model: 'demo/faulty', stream: true, messages: [{ role: 'user', content: 'pretty-stream' }] }),
        auth,
      );
      const events = sseData(res.text);
      expect(JSON.parse(events[0]!)).toMatchObject({ id: 'p1', object: 'chat.completion.chunk' });
    });

    it('answers an error before the first chunk as a JSON response', async () => {
      const res = await rawPost(
        gw.httpUrl + CHAT,
        chat({ model: 'demo/faulty', stream: true, messages: [{ role: 'user', content: 'fail-now' }] }),
        auth,
      );
      expect(res.status).toBe(503);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(res.text).error).toMatchObject({ code: 'model.overloaded', type: 'api_error' });
    });

    it('ends the stream with one error event after the first chunk', async () => {
      const res = await rawPost(
        gw.httpUrl + CHAT,
        chat({ model: 'demo/faulty', stream: true, messages: [{ role: 'user', content: 'fail-mid-stream' }] }),
        auth,
      );
      expect(res.status).toBe(200);
      const events = sseData(res.text);
      expect(events).toHaveLength(2);
      expect(JSON.parse(events[1]!)).toEqual({
        error: expect.objectContaining({ code: 'model.crashed', message: 'the model crashed mid-stream', type: 'api_error' }),
      });
      expect(events).not.toContain('[DONE]');
    });

    it('enforces the first-chunk deadline (504 before any byte) and cancels the service request', async () => {
      const res = await rawPost(
        gw.httpUrl + CHAT,
        chat({ model: 'demo/faulty', stream: true, messages: [{ role: 'user', content: 'slow-first' }] }),
        auth,
      );
      expect(res.status).toBe(504);
      expect(JSON.parse(res.text).error.code).toBe('STREAM_FIRST_CHUNK_TIMEOUT');
      const slow = faulty.requests.find((r) => r.data.messages[0].content === 'slow-first')!;
      await eventually(() => faulty.cancels.includes(slow.requestId), 2000, 'cancel');
    });

    it('enforces the idle deadline between chunks with an error event', async () => {
      const res = await rawPost(
        gw.httpUrl + CHAT,
        chat({ model: 'demo/faulty', stream: true, messages: [{ role: 'user', content: 'stall-mid-stream' }] }),
        auth,
      );
      expect(res.status).toBe(200);
      const events = sseData(res.text);
      expect(JSON.parse(events.at(-1)!).error.code).toBe('STREAM_IDLE_TIMEOUT');
    });

    it('sends cancel to the service when the caller disconnects mid-stream', async () => {
      await new Promise<void>((resolve, reject) => {
        const req = http.request(gw.httpUrl + CHAT, { method: 'POST', headers: { 'content-type': 'application/json', ...auth } }, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', () => {});
        req.end(JSON.stringify(chat({ model: 'demo/faulty', stream: true, messages: [{ role: 'user', content: 'endless' }] })));
        setTimeout(() => reject(new Error('no data')), 3000);
      });
      const endless = faulty.requests.find((r) => r.data.messages[0].content === 'endless')!;
      await eventually(() => faulty.cancels.includes(endless.requestId), 3000, 'cancel after disconnect');
      expect(gw.gateway.gate.instances().map((i) => i.inFlight)).toEqual([0, 0]);
    });

    it('turns a complete answer to a streaming request into chunks', async () => {
      const res = await rawPost(
        gw.httpUrl + CHAT,
        chat({
          model: 'demo/faulty',
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'bare' }],
        }),
        auth,
      );
      const events = sseData(res.text);
      expect(events.at(-1)).toBe('[DONE]');
      const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
      expect(chunks[0]).toMatchObject({
        object: 'chat.completion.chunk',
        choices: [{ delta: { role: 'assistant', content: 'no ids here' } }],
      });
      expect(chunks[1].choices[0].finish_reason).toBe('stop');
    });
  });
});
