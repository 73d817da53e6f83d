import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientRequestProto, ClientResponseProto } from '../../proto/src/index.js';
import {
  BLOCKED_KEY,
  ECHO_TOKEN,
  OTHER_ACCOUNT_KEY,
  PRIVATE_TOKEN,
  READ_ONLY_KEY,
  TEST_KEY,
  startTestGateway,
  testConfigInput,
  type TestGateway,
} from '../support/gateway.js';
import { RawServiceStream, json, processResponseStream, processUnary, rawClient, type RawClient } from '../support/raw-gate-client.js';

/**
 * A tiny service on the raw protocol: predict echoes `{echo: data}`; data `{stream: n}` answers with
 * n partialPredict frames; partialPredict requests are collected and answered with what arrived.
 */
function serveEcho(stream: RawServiceStream): void {
  const partials = new Map<number, unknown[]>();
  stream.call.on('data', (m: any) => {
    const requestId = m.requestId;
    if (m.body === 'predict') {
      const data = JSON.parse(m.predict.data.json);
      if (data.answerWith) {
        // The frame exactly as the test describes it: statuses, headers and payloads the gateway judges.
        for (const frame of [data.answerWith].flat()) stream.send({ requestId, ...frame });
      } else if (data.stream) {
        for (let i = 0; i < data.stream; i++) {
          stream.send({ requestId, partialPredict: { data: json({ chunk: i }), start: i === 0, finish: i === data.stream - 1 } });
        }
      } else {
        stream.send({ requestId, predict: { data: json({ echo: data, config: m.predict.config?.json ?? null }) } });
      }
    } else if (m.body === 'partialPredict') {
      const seen = partials.get(requestId) ?? [];
      seen.push({
        data: m.partialPredict.data?.json ? JSON.parse(m.partialPredict.data.json) : null,
        start: !!m.partialPredict.start,
        finish: !!m.partialPredict.finish,
      });
      partials.set(requestId, seen);
      stream.send({ requestId, partialPredict: { data: json({ ack: seen.length }), finish: !!m.partialPredict.finish } });
      if (m.partialPredict.finish)
        stream.send({ requestId: 0, deferredBillingCharge: { billingRequestId: JSON.stringify(seen), amountInUnits: 1 } });
    } else if (m.body === 'ext') {
      stream.send({ requestId, ext: { data: json({ method: m.ext.methodName, params: m.ext.params }) } });
    }
  });
}

describe('Gate client calls', () => {
  let gw: TestGateway;
  let client: RawClient;
  let service: RawServiceStream;
  let privateService: RawServiceStream;

  beforeAll(async () => {
    const input = testConfigInput();
    input.accounts[0].requestsPerSecond = 1000;
    input.accounts.push({ id: 4, name: 'slowpoke', requestsPerSecond: 2 });
    input.apiKeys.push({ name: 'slow', account: 'slowpoke', key: 'test-key-slow-account-0000001', permissions: ['MODEL_REQUESTS'] });
    gw = await startTestGateway(input);
    client = rawClient(gw.grpcAddress);
    service = new RawServiceStream(client);
    service.startServing(ECHO_TOKEN, 'echo');
    serveEcho(service);
    privateService = new RawServiceStream(client);
    privateService.startServing(PRIVATE_TOKEN, 'private');
    serveEcho(privateService);
    await service.next((m) => m.body === 'serviceInfo');
    await privateService.next((m) => m.body === 'serviceInfo');
  });
  afterAll(async () => {
    service.close();
    privateService.close();
    client.close();
    await gw.close();
  });

  const request = (extra: Partial<ClientRequestProto> = {}): ClientRequestProto => ({
    account: 'demo',
    model: 'echo',
    authToken: TEST_KEY,
    predict: { data: json({ hi: 1 }) },
    ...extra,
  });

  it('process: addresses account and model by name or by ID', async () => {
    const byName = await processUnary(client, request());
    expect(JSON.parse(byName.predict!.data!.json!)).toEqual({ echo: { hi: 1 }, config: null });
    const byId = await processUnary(client, request({ account: '1', model: '10', predict: { data: json('x'), config: json({ t: 1 }) } }));
    expect(JSON.parse(byId.predict!.data!.json!)).toEqual({ echo: 'x', config: '{"t":1}' });
  });

  it('process: ext requests reach the service method', async () => {
    const res = await processUnary(client, {
      account: 'demo',
      model: 'echo',
      authToken: TEST_KEY,
      ext: { methodName: 'info', params: { a: { json: '"b"', dataType: 'text' } } },
    });
    expect(JSON.parse(res.ext!.data!.json!)).toMatchObject({ method: 'info', params: { a: { json: '"b"', dataType: 'text' } } });
  });

  it('processResponseStream: streams partial answers in order', async () => {
    const frames = await processResponseStream(client, request({ predict: { data: json({ stream: 3 }) } }));
    expect(frames.map((f) => f.body)).toEqual(['partialPredict', 'partialPredict', 'partialPredict']);
    expect(frames.map((f) => JSON.parse(f.partialPredict!.data!.json!).chunk)).toEqual([0, 1, 2]);
    expect(frames[2]!.partialPredict!.finish).toBe(true);
  });

  it('processResponseStream: a single predict answer is one frame', async () => {
    const frames = await processResponseStream(client, request());
    expect(frames).toHaveLength(1);
    expect(frames[0]!.body).toBe('predict');
  });

  it('processStream: start on the first message, finish on the last message that carries data', async () => {
    const call = client.processStream();
    const answers: ClientResponseProto[] = [];
    const done = new Promise<void>((resolve, reject) => {
      call.on('data', (m: ClientResponseProto) => answers.push(m));
      call.on('end', resolve);
      call.on('error', reject);
    });
    // The client sets neither start nor finish, and just half-closes, as Java clients do.
    call.write({ account: 'demo', model: 'echo', authToken: TEST_KEY, partialPredict: { data: json('a') } });
    call.write({ partialPredict: { data: json('b') } });
    call.write({ predict: { data: json('c') } });
    call.end();
    await done;
    expect(answers.every((a) => a.body === 'partialPredict')).toBe(true);
    expect(answers.at(-1)!.partialPredict!.finish).toBe(true);
    const record = gw.gateway.gate.billing.list().at(-1)!;
    expect(JSON.parse(record.billingRequestId!)).toEqual([
      { data: 'a', start: true, finish: false },
      { data: 'b', start: false, finish: false },
      { data: 'c', start: false, finish: true },
    ]);
  });

  const errorOf = async (req: ClientRequestProto) => (await processUnary(client, req)).error;

  it.each([
    ['no authToken', { authToken: '' }, 'API_KEY_MISSING', 401],
    ['unknown authToken', { authToken: 'nope-nope-nope-nope' }, 'API_KEY_INVALID', 401],
    ['blocked account', { authToken: BLOCKED_KEY }, 'ACCOUNT_BLOCKED', 402],
    ['key without MODEL_REQUESTS', { authToken: READ_ONLY_KEY }, 'TOKEN_PERMISSION_REQUIRED', 403],
    ['unknown account', { account: 'ghost' }, 'ACCOUNT_NOT_FOUND', 400],
    ['unknown service', { model: 'ghost' }, 'SERVICE_NOT_FOUND', 400],
    ['service ID of another account', { account: 'other', model: '10' }, 'SERVICE_NOT_FOUND', 400],
    [
      'private service of another account',
      { model: 'private', authToken: OTHER_ACCOUNT_KEY },
      'ACCESS_TO_ANOTHER_ACCOUNT_NOT_PUBLIC_DENIED',
      403,
    ],
    ['no body', { predict: undefined }, 'VALIDATION_FAILED', 400],
    ['config that is not JSON', { predict: { data: json(1), config: { json: '{oops' } } }, 'MALFORMED_JSON', 400],
  ])('in-band error for %s', async (_what, extra, code, statusCode) => {
    expect(await errorOf(request(extra as Partial<ClientRequestProto>))).toMatchObject({ code, statusCode });
  });

  it('process: the answer is read by the one answer reader (allowed headers, final statuses, no JSON/protobuf mix)', async () => {
    const answerWith = (frame: object) => request({ predict: { data: json({ answerWith: frame }) } });
    const ok = await processUnary(
      client,
      answerWith({
        headers: { 'x-model-version': '7', 'set-cookie': 'a=b' },
        predict: { data: json({ ok: true }), statusCode: 201, headers: { location: '/elsewhere', 'content-language': 'de' } },
      }),
    );
    expect(JSON.parse(ok.predict!.data!.json!)).toEqual({ ok: true });
    expect(ok.headers).toEqual({ 'x-model-version': '7', 'content-language': 'de' });
    const interim = await processUnary(client, answerWith({ predict: { data: json({}), statusCode: 103 } }));
    expect(interim.error).toMatchObject({ statusCode: 502 });
    expect(interim.error!.message).toMatch(/not a final HTTP status/);
    const mixed = await processUnary(
      client,
      request({
        predict: {
          data: json({
            answerWith: [
              { partialPredict: { data: json(1), start: true } },
              { partialPredict: { data: { protobuf: [1, 2] }, finish: true } },
            ],
          }),
        },
      }),
    );
    expect(mixed.error).toMatchObject({ statusCode: 502 });
    expect(mixed.error!.message).toMatch(/mixed JSON and protobuf/);
  });

  it('public services answer other accounts; private ones their owner', async () => {
    expect((await processUnary(client, request({ authToken: OTHER_ACCOUNT_KEY }))).body).toBe('predict');
    expect((await processUnary(client, request({ model: 'private' }))).body).toBe('predict');
  });

  it('rate limit: beyond the account setting gives platform.gate.pps_limit_exceeded (429)', async () => {
    const slow = { authToken: 'test-key-slow-account-0000001' };
    const results = await Promise.all(Array.from({ length: 5 }, () => errorOf(request(slow))));
    const limited = results.filter((e) => e?.code === 'platform.gate.pps_limit_exceeded');
    expect(limited.length).toBeGreaterThanOrEqual(3);
    expect(limited[0]).toMatchObject({ statusCode: 429 });
  });
});
