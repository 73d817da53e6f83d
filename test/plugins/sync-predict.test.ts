import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GateToServiceProto } from '../../proto/src/index.js';
import {
  BLOCKED_KEY,
  ECHO_TOKEN,
  OTHER_ACCOUNT_KEY,
  READ_ONLY_KEY,
  TEST_KEY,
  eventually,
  startTestGateway,
  testConfigInput,
  type TestGateway,
} from '../support/gateway.js';
import { RawServiceStream, json, rawClient, type RawClient } from '../support/raw-gate-client.js';
import { registryFixture } from '../support/registry-fixture.js';

const SLOW_TOKEN = 'slow-service-token-0001';
const SLOWPOKE_KEY = 'test-key-slow-account-0000001';
const BODY_LIMIT = 256 * 1024;

/**
 * The model service of these tests, on the raw protocol. It keeps every request it gets and answers
 * a predict with what it received: `{data, config, dataType}` (data and config parsed from their JSON
 * text). Data fields steer it: `silent` never answers, `fail` answers with a service error of that status, `reply` answers
 * with that statusCode, headers and JSON, `stream` with that many partialPredict frames, `binary`
 * with protobuf bytes. A protobuf request is answered with its bytes reversed. ext echoes its call.
 */
function serve(stream: RawServiceStream, log: GateToServiceProto[]): void {
  stream.call.on('data', (m: GateToServiceProto) => {
    if (m.body === 'heartBeat' || m.body === 'serviceInfo') return;
    log.push(m);
    const requestId = m.requestId;
    if (m.body === 'ext') {
      stream.send({ requestId, ext: { data: json({ method: m.ext!.methodName, params: m.ext!.params ?? {} }) } });
      return;
    }
    if (m.body !== 'predict') return;
    const payload = m.predict!.data!;
    if (payload.protobuf) {
      stream.send({ requestId, predict: { data: { protobuf: Buffer.from(payload.protobuf).reverse() } } });
      return;
    }
    const data = JSON.parse(payload.json!);
    if (data.silent) return;
    if (data.fail) {
      stream.send({
        requestId,
        error: { code: 'platform-action.common.bad-request', message: `model refused: ${data.why}`, statusCode: data.fail },
      });
    } else if (data.reply) {
      stream.send({
        requestId,
        headers: data.reply.frameHeaders ?? {},
        predict: { data: json(data.reply.body), statusCode: data.reply.status, headers: data.reply.headers },
      });
    } else if (data.stream) {
      for (let i = 0; i < data.stream; i++) {
        stream.send({ requestId, partialPredict: { data: json({ chunk: i }), start: i === 0, finish: i === data.stream - 1 } });
      }
    } else if (data.binary) {
      stream.send({ requestId, predict: { data: { protobuf: Buffer.from([1, 2, 3]) } } });
    } else {
      const config = m.predict!.config?.json;
      stream.send({
        requestId,
        predict: { data: json({ data, config: config === undefined ? null : JSON.parse(config), dataType: payload.dataType ?? null }) },
      });
    }
  });
}

describe('sync-predict plugin', () => {
  let gw: TestGateway;
  let client: RawClient;
  let echo: RawServiceStream;
  let slow: RawServiceStream;
  const echoLog: GateToServiceProto[] = [];
  const slowLog: GateToServiceProto[] = [];
  let http: ReturnType<typeof request>;
  let specsUrl: string;

  beforeAll(async () => {
    const input = testConfigInput({
      server: { httpPort: 0, grpcPort: 0, bodyLimitBytes: BODY_LIMIT },
      registry: registryFixture(),
      plugins: { enabled: ['sync-predict'] },
    });
    Object.assign(input.services[0], {
      provider: 'acme',
      defaultModel: 'acme-chat',
      configs: [
        { id: 1, name: 'cold', default: true, config: { temperature: 0.1 } },
        { id: 2, name: 'hot', config: { temperature: 1.9, quality: 'high' } },
      ],
    });
    input.services.push(
      { id: 12, name: 'slow', account: 'demo', public: true, timeoutSec: 0.5, connectionTokens: [{ token: SLOW_TOKEN }] },
      { id: 13, name: 'lonely', account: 'demo', public: true },
    );
    input.accounts.push({ id: 4, name: 'slowpoke', requestsPerSecond: 2 });
    input.apiKeys.push({ name: 'slow', account: 'slowpoke', key: SLOWPOKE_KEY, permissions: ['MODEL_REQUESTS'] });
    gw = await startTestGateway(input);
    specsUrl = gw.gateway.dataTypes.specsUrl;
    http = request(gw.gateway.app.callback());
    client = rawClient(gw.grpcAddress);
    echo = new RawServiceStream(client);
    echo.startServing(ECHO_TOKEN, 'echo');
    serve(echo, echoLog);
    slow = new RawServiceStream(client);
    slow.startServing(SLOW_TOKEN, 'slow');
    slow.call.on('data', (m: GateToServiceProto) => {
      if (m.body !== 'heartBeat' && m.body !== 'serviceInfo') slowLog.push(m);
    });
    await echo.next((m) => m.body === 'serviceInfo');
    await slow.next((m) => m.body === 'serviceInfo');
  });
  afterAll(async () => {
    echo.close();
    slow.close();
    client.close();
    await gw.close();
  });

  const path = (endpoint: string, account = 'demo', model = 'echo') => `/api/platformgate/account/${account}/model/${model}/${endpoint}`;
  /** A POST with the key given (TEST_KEY by default; null sends none). */
  const post = (endpoint: string, key: string | null = TEST_KEY, account?: string, model?: string) => {
    const req = http.post(path(endpoint, account, model));
    return key === null ? req : req.set('PLATFORM-API-KEY', key);
  };
  const lastPredict = () => echoLog.filter((m) => m.body === 'predict').at(-1)!.predict!;

  describe('predict-with-config', () => {
    it('sends data, config and dataType to the service and returns its answer as JSON', async () => {
      const res = await post('predict-with-config')
        .send({ data: { text: 'hi' }, config: { temperature: 0.5 }, dataType: 'application/json' })
        .expect(200)
        .expect('Content-Type', /^application\/json/);
      expect(res.body).toEqual({ data: { text: 'hi' }, config: { temperature: 0.5 }, dataType: 'application/json' });
      const sent = lastPredict();
      expect(sent.data).toMatchObject({ json: '{"text":"hi"}', dataType: 'application/json' });
      expect(sent.config).toMatchObject({ json: '{"temperature":0.5}' });
    });

    it('addresses account and service by ID as well as by name', async () => {
      const res = await post('predict-with-config', TEST_KEY, '1', '10')
        .send({ data: { n: 1 }, config: {} })
        .expect(200);
      expect(res.body).toMatchObject({ data: { n: 1 }, config: {} });
    });

    it('without config, the service default config is sent', async () => {
      const res = await post('predict-with-config')
        .send({ data: { n: 1 } })
        .expect(200);
      expect(res.body.config).toEqual({ temperature: 0.1 });
      await post('predict-with-config')
        .send({ data: { n: 1 }, config: null })
        .expect(200);
      expect(lastPredict().config).toMatchObject({ json: '{"temperature":0.1}' });
    });

    it('passes the service statusCode and headers on, but not billing or framing headers', async () => {
      const reply = {
        status: 201,
        body: { created: true },
        headers: { 'X-Model-Version': '7', 'Z-custom-billing': '12', 'Content-Length': '1', 'X-Bad': 'a\r\nb' },
        frameHeaders: { 'Z-Server-Time': '5' },
      };
      const res = await post('predict-with-config').send({ data: { reply } }).expect(201);
      expect(res.body).toEqual({ created: true });
      expect(res.headers['x-model-version']).toBe('7');
      expect(res.headers['z-server-time']).toBe('5');
      expect(res.headers['z-custom-billing']).toBeUndefined();
      expect(res.headers['x-bad']).toBeUndefined();
    });

    it('a protobuf answer is application/octet-stream', async () => {
      const res = await post('predict-with-config')
        .send({ data: { binary: true } })
        .buffer(true)
        .parse(binaryParser)
        .expect(200)
        .expect('Content-Type', 'application/octet-stream');
      expect([...(res.body as Buffer)]).toEqual([1, 2, 3]);
    });

    it('a streamed answer becomes a JSON array of its payloads', async () => {
      const res = await post('predict-with-config')
        .send({ data: { stream: 3 } })
        .expect(200);
      expect(res.body).toEqual([{ chunk: 0 }, { chunk: 1 }, { chunk: 2 }]);
    });

    it('chat data with an image content part round-trips byte for byte', async () => {
      const image = randomBytes(48 * 1024);
      const data = {
        model: 'claude-test',
        max_tokens: 64,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: image.toString('base64') } },
              { type: 'text', text: 'Describe this image. «ünïcödé» \u2028 "quoted"' },
            ],
          },
        ],
      };
      const res = await post('predict-with-config')
        .send({ data, config: {}, dataType: `${specsUrl}/gpt.json#/ChatCompletionRequest` })
        .expect(200);
      expect(res.body.data).toEqual(data);
      const received = JSON.parse(lastPredict().data!.json!);
      expect(Buffer.from(received.messages[0].content[0].source.data, 'base64').equals(image)).toBe(true);
      expect(Buffer.from(res.body.data.messages[0].content[0].source.data, 'base64').equals(image)).toBe(true);
      expect(received.messages[0].content[1].text).toBe(data.messages[0]!.content[1]!.text);
    });
  });

  describe('predict (raw body)', () => {
    it('passes the body exactly as sent, with the default config', async () => {
      const raw = '{ "spaced" :  [1, 2.50, "x"] }';
      const res = await post('predict').set('Content-Type', 'application/json').send(raw).expect(200);
      expect(lastPredict().data).toMatchObject({ json: raw });
      expect(lastPredict().config).toMatchObject({ json: '{"temperature":0.1}' });
      expect(res.body.data).toEqual({ spaced: [1, 2.5, 'x'] });
    });

    it('configId selects a named config of the service; dataType is passed on', async () => {
      const res = await post('predict')
        .query({ configId: '2', dataType: 'text/x-test' })
        .set('Content-Type', 'application/json')
        .send('{"q":1}')
        .expect(200);
      expect(res.body).toEqual({ data: { q: 1 }, config: { temperature: 1.9, quality: 'high' }, dataType: 'text/x-test' });
    });

    it('an unknown configId → 400 UNKNOWN_CONFIG_ID', async () => {
      const res = await post('predict').query({ configId: '99' }).set('Content-Type', 'application/json').send('{}').expect(400);
      expect(res.body.error).toMatchObject({ code: 'UNKNOWN_CONFIG_ID', param: 'configId' });
      await post('predict').query({ configId: 'abc' }).set('Content-Type', 'application/json').send('{}').expect(400);
    });

    it('a binary body goes to the service as protobuf and comes back as octet-stream', async () => {
      const res = await post('predict')
        .set('Content-Type', 'application/octet-stream')
        .send(Buffer.from([9, 8, 7]))
        .buffer(true)
        .parse(binaryParser)
        .expect(200);
      expect([...(res.body as Buffer)]).toEqual([7, 8, 9]);
      expect(res.headers['content-type']).toBe('application/octet-stream');
    });

    it('an empty body → 400', async () => {
      const res = await post('predict').set('Content-Type', 'application/json').expect(400);
      expect(res.body.error).toMatchObject({ code: 'VALIDATION_FAILED', param: 'body' });
    });
  });

  describe('predict-with-config-v2 and ext', () => {
    it('v2 passes data and config strings exactly as sent', async () => {
      const res = await post('predict-with-config-v2').send({ data: '{"a" : 1}', config: '{"temperature" : 1.5}' }).expect(200);
      expect(lastPredict().data).toMatchObject({ json: '{"a" : 1}' });
      expect(lastPredict().config).toMatchObject({ json: '{"temperature" : 1.5}' });
      expect(res.body).toMatchObject({ data: { a: 1 }, config: { temperature: 1.5 } });
    });

    it('v2 without config sends the default config; a config that is not JSON → 400', async () => {
      await post('predict-with-config-v2').send({ data: '{}' }).expect(200);
      expect(lastPredict().config).toMatchObject({ json: '{"temperature":0.1}' });
      const res = await post('predict-with-config-v2').send({ data: '{}', config: '{temperature' }).expect(400);
      expect(res.body.error).toMatchObject({ code: 'MALFORMED_JSON', param: 'config' });
    });

    it('ext calls the service extended method, each parameter as {json: <text>}', async () => {
      const res = await post('ext')
        .send({ methodName: 'info', params: { verbose: 'yes', n: '{"a":1}' } })
        .expect(200);
      expect(res.body).toMatchObject({ method: 'info', params: { verbose: { json: 'yes' }, n: { json: '{"a":1}' } } });
      expect(Object.keys(res.body.params).sort()).toEqual(['n', 'verbose']);
      const bad = await post('ext')
        .send({ methodName: 'info', params: { n: 1 } })
        .expect(400);
      expect(bad.body.error).toMatchObject({ code: 'VALIDATION_FAILED', param: 'params' });
    });
  });

  describe('the {gateway} prefix, where the public SDK REST client calls', () => {
    const gatewayPath = (endpoint: string) => `/api/platformgateway/account/demo/model/echo/${endpoint}`;

    it.each(['predict', 'predict-with-config', 'predict-with-config-v2', 'ext'])(
      '%s is served under /api/platformgateway too',
      async (endpoint) => {
        const body =
          endpoint === 'predict'
            ? '{"q":2}'
            : endpoint === 'predict-with-config'
              ? { data: { q: 2 }, config: {} }
              : endpoint === 'predict-with-config-v2'
                ? { data: '{"q":2}' }
                : { methodName: 'info', params: { q: '2' } };
        const res = await http
          .post(gatewayPath(endpoint))
          .set('PLATFORM-API-KEY', TEST_KEY)
          .set('Content-Type', 'application/json')
          .send(body)
          .expect(200);
        if (endpoint === 'ext') expect(res.body).toMatchObject({ method: 'info', params: { q: { json: '2' } } });
        else expect(res.body).toMatchObject({ data: { q: 2 } });
      },
    );

    it('admits callers there exactly as under /api/platformgate', async () => {
      const res = await http.post(gatewayPath('predict-with-config')).send({ data: {} }).expect(401);
      expect(res.body.error).toMatchObject({ code: expect.any(String) });
    });
  });

  describe('validation against the registry', () => {
    it('a config outside the model bounds → 400 naming the parameter, the bound and the value', async () => {
      const res = await post('predict-with-config')
        .send({ data: {}, config: { temperature: 3.5 } })
        .expect(400);
      expect(res.body).toEqual({
        error: {
          code: 'PARAMETER_OUT_OF_RANGE',
          message: "Parameter 'temperature' must be at most 2 (max of model 'acme-chat'), got 3.5",
          type: 'invalid_request_error',
          param: 'temperature',
          args: { param: 'temperature', model: 'acme-chat', bound: 'max', limit: '2', value: '3.5' },
        },
      });
    });

    it('every endpoint that carries a config checks it, and nothing reaches the service', async () => {
      const before = echoLog.length;
      await post('predict-with-config')
        .send({ data: {}, config: { quality: 'ultra' } })
        .expect(400);
      await post('predict-with-config-v2').send({ data: '{}', config: '{"max_tokens": 0}' }).expect(400);
      await post('predict-with-config')
        .send({ data: {}, config: { model: 'acme-strict' } })
        .expect(400);
      expect(echoLog.length).toBe(before);
    });

    it('registry defaults are not filled in', async () => {
      await post('predict-with-config')
        .send({ data: {}, config: { quality: 'high' } })
        .expect(200);
      expect(lastPredict().config).toMatchObject({ json: '{"quality":"high"}' });
    });
  });

  describe('data types published under {specs_url}', () => {
    const chat = { messages: [{ role: 'user', content: 'hi' }] };

    it('data matching the named type passes, also when named through the address the caller used', async () => {
      await post('predict-with-config')
        .send({ data: chat, dataType: `${specsUrl}/gpt.json#/ChatCompletionRequest` })
        .expect(200);
      await request(gw.httpUrl)
        .post(path('predict-with-config'))
        .set('PLATFORM-API-KEY', TEST_KEY)
        .send({ data: chat, dataType: `${gw.httpUrl.replace('127.0.0.1', 'localhost')}/specs/gpt.json#/ChatCompletionRequest` })
        .expect(200);
    });

    it('data violating the named type → 400 naming the problem', async () => {
      const data = { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png' } }] }] };
      const res = await post('predict-with-config')
        .send({ data, dataType: `${specsUrl}/gpt.json#/ChatCompletionRequest` })
        .expect(400);
      expect(res.body.error).toMatchObject({ code: 'DATA_TYPE_MISMATCH', param: 'data' });
      expect(res.body.error.message).toBe(
        "data does not match data type gpt.json#/ChatCompletionRequest: /messages/0/content/0/source: must have required property 'data'",
      );
    });

    it('raw and v2 bodies are checked too', async () => {
      const dataType = `${specsUrl}/gpt.json#/ChatCompletionRequest`;
      const raw = await post('predict').query({ dataType }).set('Content-Type', 'application/json').send('{"messages": []}').expect(400);
      expect(raw.body.error).toMatchObject({
        code: 'DATA_TYPE_MISMATCH',
        message: expect.stringContaining('/messages: must NOT have fewer than 1 items'),
      });
      await post('predict-with-config-v2').send({ data: '{"messages":[{"role":"robot"}]}', dataType }).expect(400);
      await post('predict-with-config-v2')
        .send({ data: JSON.stringify(chat), dataType })
        .expect(200);
    });

    it('an unknown type under {specs_url} → 400; other data types are the service business', async () => {
      const res = await post('predict-with-config')
        .send({ data: chat, dataType: `${specsUrl}/gpt.json#/NoSuchType` })
        .expect(400);
      expect(res.body.error).toMatchObject({ code: 'UNKNOWN_DATA_TYPE', param: 'dataType' });
      await post('predict-with-config')
        .send({ data: { any: 1 }, dataType: 'https://example.invalid/specs/gpt.json#/ChatCompletionRequest' })
        .expect(200);
      await post('predict-with-config')
        .send({ data: { any: 1 }, dataType: `${specsUrl}/common.json#/JsonObject` })
        .expect(200);
    });
  });

  describe('errors', () => {
    const ok = { data: { x: 1 }, config: {} };

    it.each([
      ['no API key', 401, 'API_KEY_MISSING', null, 'demo', 'echo'],
      ['an unknown API key', 401, 'API_KEY_INVALID', 'not-a-key-not-a-key', 'demo', 'echo'],
      ['a blocked account', 402, 'ACCOUNT_BLOCKED', BLOCKED_KEY, 'demo', 'echo'],
      ['a key without MODEL_REQUESTS', 403, 'TOKEN_PERMISSION_REQUIRED', READ_ONLY_KEY, 'demo', 'echo'],
      ['another account private service', 403, 'ACCESS_TO_ANOTHER_ACCOUNT_NOT_PUBLIC_DENIED', OTHER_ACCOUNT_KEY, 'demo', 'private'],
      ['an unknown account', 400, 'ACCOUNT_NOT_FOUND', TEST_KEY, 'ghost', 'echo'],
      ['an unknown service', 400, 'SERVICE_NOT_FOUND', TEST_KEY, 'demo', 'ghost'],
      ['a service with no active instances', 400, 'NO_ACTIVE_INSTANCES', TEST_KEY, 'demo', 'lonely'],
    ])('%s → %i %s', async (_what, status, code, key, account, model) => {
      for (const endpoint of ['predict-with-config', 'predict']) {
        const res = await post(endpoint, key, account, model)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify(ok))
          .expect(status);
        expect(res.body.error.code).toBe(code);
      }
    });

    it('a public service of another account answers', async () => {
      await post('predict-with-config', OTHER_ACCOUNT_KEY).send(ok).expect(200);
    });

    it.each([
      ['malformed JSON', '{"data": {', 'MALFORMED_JSON', null],
      ['an empty body', '', 'MALFORMED_JSON', null],
      ['data that is not an object', '{"data": "text"}', 'VALIDATION_FAILED', 'data'],
      ['no data', '{"config": {}}', 'VALIDATION_FAILED', 'data'],
      ['config that is not an object', '{"data": {}, "config": [1]}', 'VALIDATION_FAILED', 'config'],
      ['dataType that is not a string', '{"data": {}, "dataType": 5}', 'VALIDATION_FAILED', 'dataType'],
      ['an unknown field', '{"data": {}, "confgi": {}}', 'VALIDATION_FAILED', 'confgi'],
    ])('%s → 400 %s', async (_what, body, code, param) => {
      const res = await post('predict-with-config').set('Content-Type', 'application/json').send(body).expect(400);
      expect(res.body.error).toMatchObject({ code, param });
    });

    it('v2 with data that is not a string → 400', async () => {
      const res = await post('predict-with-config-v2')
        .send({ data: { a: 1 } })
        .expect(400);
      expect(res.body.error).toMatchObject({
        code: 'VALIDATION_FAILED',
        param: 'data',
        message: 'Invalid request: body/data: must be string',
      });
    });

    it('an oversized body → 413', async () => {
      const big = JSON.stringify({ data: { blob: 'x'.repeat(BODY_LIMIT) } });
      const res = await post('predict-with-config').set('Content-Type', 'application/json').send(big).expect(413);
      expect(res.body.error.code).toBe('REQUEST_TOO_LARGE');
      await post('predict').set('Content-Type', 'application/json').send(big).expect(413);
    });

    it('over the account rate → 429', async () => {
      const results = await Promise.all(Array.from({ length: 6 }, () => post('predict-with-config', SLOWPOKE_KEY).send(ok)));
      const limited = results.filter((r) => r.status === 429);
      expect(limited.length).toBeGreaterThanOrEqual(3);
      expect(limited[0]!.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', type: 'rate_limit_error' });
    });

    it('a service that does not answer in time → 504, and the service is told to cancel', async () => {
      const res = await post('predict-with-config', TEST_KEY, 'demo', 'slow').send(ok).expect(504);
      expect(res.body.error.code).toBe('PREDICT_TIMEOUT');
      const predict = slowLog.filter((m) => m.body === 'predict').at(-1)!;
      await eventually(
        () => slowLog.some((m) => m.body === 'cancel' && Number(m.cancel!.requestIdToCancel) === Number(predict.requestId)),
        2000,
        'cancel',
      );
    });

    it('a service error is passed on with its status, code and message', async () => {
      const res = await post('predict-with-config')
        .send({ data: { fail: 422, why: 'too long' } })
        .expect(422);
      expect(res.body.error).toMatchObject({ code: 'platform-action.common.bad-request', message: 'model refused: too long' });
      await post('predict').set('Content-Type', 'application/json').send('{"fail": 409, "why": "busy"}').expect(409);
    });

    it('the caller disconnecting cancels the request at the service', async () => {
      // The echo service never answers `silent`; its timeout (10 s) is far beyond this test's wait.
      const before = echoLog.length;
      const req = httpRequest(`${gw.httpUrl}${path('predict-with-config')}`, {
        method: 'POST',
        headers: { 'PLATFORM-API-KEY': TEST_KEY, 'Content-Type': 'application/json' },
      });
      req.on('error', () => {});
      req.end(JSON.stringify({ data: { silent: true } }));
      await eventually(() => echoLog.slice(before).some((m) => m.body === 'predict'), 2000, 'predict at the service');
      const predict = echoLog.slice(before).find((m) => m.body === 'predict')!;
      req.destroy();
      await eventually(
        () => echoLog.some((m) => m.body === 'cancel' && Number(m.cancel!.requestIdToCancel) === Number(predict.requestId)),
        2000,
        'cancel',
      );
    });
  });
});

/** A supertest parser that keeps the body as bytes. */
function binaryParser(res: request.Response, callback: (err: Error | null, body: Buffer) => void): void {
  const stream = res as unknown as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('end', () => callback(null, Buffer.concat(chunks)));
}
