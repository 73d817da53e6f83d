import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ServiceError,
  jsonPayload,
  protobufPayload,
  type ModelHandlers,
  type ModelService,
  type ModelServiceOptions,
} from '../../sdk/index.js';
import { HarnessGate, eventually, sleep, type HarnessStream } from './support/harness-gate.js';
import { startService } from './support/service.js';

let gate: HarnessGate;
let service: ModelService | undefined;

beforeEach(async () => {
  gate = await HarnessGate.start({ heartbeatInterval: 100 });
});
afterEach(async () => {
  await service?.stop();
  service = undefined;
  await gate.close();
});

async function serve(handlers: ModelHandlers, options: Partial<ModelServiceOptions> = {}): Promise<HarnessStream> {
  service = startService(gate, handlers, options);
  await service.ready();
  const stream = await gate.openStream();
  await stream.waitFor((m) => m.body === 'startServing');
  return stream;
}

describe('predict', () => {
  it("answers with the handler's JSON value, the requestId and the correlation headers", async () => {
    const stream = await serve({
      predict(req, ctx) {
        ctx.setHeader('Z-custom-billing', 42);
        const input = req.data.json<{ name: string }>();
        return { greeting: `hello ${input.name}`, config: req.config?.json() ?? null };
      },
    });
    stream.send({
      requestId: 11,
      headers: { 'Z-requestId': 'corr-1' },
      predict: { data: { json: '{"name":"x"}' }, config: { json: '{"t":1}' } },
    });
    const answer = await stream.waitForAnswer(11);
    expect(answer.body).toBe('predict');
    expect(JSON.parse(answer.predict?.data?.json ?? '')).toEqual({ greeting: 'hello x', config: { t: 1 } });
    expect(answer.headers).toMatchObject({ 'Z-requestId': 'corr-1', 'Z-custom-billing': '42' });
    expect(Number(answer.headers?.['Z-Server-Time'])).toBeGreaterThanOrEqual(0);
    expect(answer.predict?.headers).toMatchObject({ 'Z-custom-billing': '42' });
  });

  it('passes payload helpers, raw protobuf bytes, dataType and statusCode through', async () => {
    const stream = await serve({
      predict(req) {
        const bytes = req.data.bytes ?? Buffer.alloc(0);
        return { data: protobufPayload(Buffer.from([...bytes].reverse()), 'Reversed'), statusCode: 201, headers: { h: 'v' } };
      },
    });
    stream.send({ requestId: 3, predict: { data: { dataType: 'Raw', protobuf: Buffer.from([1, 2, 3]) } } });
    const answer = await stream.waitForAnswer(3);
    expect(answer.predict?.data?.dataType).toBe('Reversed');
    expect([...(answer.predict?.data?.protobuf ?? [])]).toEqual([3, 2, 1]);
    expect(answer.predict?.statusCode).toBe(201);
    expect(answer.headers?.h).toBe('v');
  });

  it('streams an async iterable as partialPredict frames: start on the first, finish on the last', async () => {
    const stream = await serve({
      async *predict(req) {
        const { n } = req.data.json<{ n: number }>();
        for (let i = 1; i <= n; i++) yield { i };
      },
    });
    stream.send({ requestId: 21, predict: { data: { json: '{"n":3}' } } });
    await stream.waitForAnswer(21);
    const frames = stream.messagesFor(21);
    expect(frames.map((f) => f.body)).toEqual(['partialPredict', 'partialPredict', 'partialPredict']);
    expect(frames.map((f) => [f.partialPredict?.start ?? false, f.partialPredict?.finish ?? false])).toEqual([
      [true, false],
      [false, false],
      [false, true],
    ]);
    expect(frames.map((f) => f.partialPredict?.data?.json)).toEqual(['{"i":1}', '{"i":2}', '{"i":3}']);
  });

  it('streams large chunks through transport back-pressure without losing any', async () => {
    const chunk = 'x'.repeat(512 * 1024);
    const stream = await serve({
      async *predict() {
        for (let i = 0; i < 24; i++) yield { i, chunk };
      },
    });
    stream.send({ requestId: 22, predict: { data: { json: '{}' } } });
    await stream.waitForAnswer(22, 20_000);
    const frames = stream.messagesFor(22);
    expect(frames.map((f) => (JSON.parse(f.partialPredict?.data?.json ?? '{}') as { i: number }).i)).toEqual([...Array(24).keys()]);
    expect(frames.filter((f) => f.partialPredict?.finish)).toHaveLength(1);
  });

  it('a one-chunk stream is a single frame with start and finish; an empty one still ends the request', async () => {
    const stream = await serve({
      async *predict(req) {
        if (req.data.json() === 1) yield jsonPayload('only');
      },
    });
    stream.send({ requestId: 1, predict: { data: { json: '1' } } });
    stream.send({ requestId: 2, predict: { data: { json: '0' } } });
    const one = await stream.waitForAnswer(1);
    expect(one.partialPredict).toMatchObject({ start: true, finish: true, data: { json: '"only"' } });
    const empty = await stream.waitForAnswer(2);
    expect(empty.partialPredict).toMatchObject({ start: true, finish: true });
    expect(stream.messagesFor(1)).toHaveLength(1);
  });

  it("cancel aborts the handler's signal and sends no answer", async () => {
    let reason: unknown;
    const stream = await serve({
      predict: (_req, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener('abort', () => {
            reason = ctx.signal.reason;
            resolve('too late');
          });
        }),
    });
    stream.send({ requestId: 31, predict: { data: { json: '{}' } } });
    await sleep(50);
    stream.send({ cancel: { requestIdToCancel: 31 } });
    await eventually(() => reason, 5000, 'the abort');
    expect((reason as Error).name).toBe('RequestCancelledError');
    await sleep(100);
    expect(stream.messagesFor(31)).toHaveLength(0);
  });

  it('cancel stops a streaming generator', async () => {
    let finallyRan = false;
    const stream = await serve({
      async *predict(_req, ctx) {
        try {
          for (let i = 0; !ctx.signal.aborted; i++) {
            yield { i };
            await sleep(20);
          }
        } finally {
          finallyRan = true;
        }
      },
    });
    stream.send({ requestId: 32, predict: { data: { json: '{}' } } });
    await stream.waitFor((m) => m.requestId === 32 && m.partialPredict?.start === true);
    stream.send({ cancel: { requestIdToCancel: 32 } });
    await sleep(150);
    const count = stream.messagesFor(32).length;
    await sleep(150);
    expect(stream.messagesFor(32).length).toBe(count);
    expect(stream.messagesFor(32).some((m) => m.partialPredict?.finish)).toBe(false);
    expect(finallyRan).toBe(true);
  });

  it('the stream dropping aborts in-flight signals', async () => {
    let aborted = false;
    const stream = await serve({
      predict: (_req, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener('abort', () => {
            aborted = true;
            resolve(null);
          });
        }),
    });
    stream.send({ requestId: 41, predict: { data: { json: '{}' } } });
    await sleep(50);
    stream.end();
    await gate.stream(1);
    expect(aborted).toBe(true);
  });

  it('gives the handler the latest serviceInfo', async () => {
    const stream = await serve({ predict: (_req, ctx) => ctx.serviceInfo ?? {} });
    stream.send({ serviceInfo: { accountId: 5, modelId: 6, modelName: 'm', authToken: 'a' } });
    stream.send({ serviceInfo: { accountId: 5, modelId: 7, modelName: 'm2', authToken: 'a' } });
    stream.send({ requestId: 1, predict: { data: { json: '{}' } } });
    const answer = await stream.waitForAnswer(1);
    expect(JSON.parse(answer.predict?.data?.json ?? '')).toMatchObject({ modelId: 7, modelName: 'm2' });
    expect(service?.serviceInfo?.modelId).toBe(7);
  });
});

describe('errors', () => {
  it('maps a thrown Error to processing-exception (500)', async () => {
    const stream = await serve({
      predict() {
        throw new Error('model exploded');
      },
    });
    stream.send({ requestId: 1, predict: { data: { json: '{}' } } });
    const answer = await stream.waitForAnswer(1);
    expect(answer.error).toMatchObject({ code: 'platform-action.common.processing-exception', message: 'model exploded', statusCode: 500 });
  });

  it("keeps a ServiceError's code, message, status and args", async () => {
    const stream = await serve({
      predict() {
        throw new ServiceError('my.model.quota', 'quota used up', 429, { limit: '10' });
      },
    });
    stream.send({ requestId: 2, predict: { data: { json: '{}' } } });
    const answer = await stream.waitForAnswer(2);
    expect(answer.error).toMatchObject({
      code: 'my.model.quota',
      message: 'quota used up',
      statusCode: 429,
      args: { limit: '10' },
      status: 'TOO_MANY_REQUESTS',
    });
  });

  it('answers unreadable input with bad-request (400)', async () => {
    const stream = await serve({ predict: (req) => req.data.json() });
    stream.send({ requestId: 3, predict: { data: { json: '{not json' } } });
    const answer = await stream.waitForAnswer(3);
    expect(answer.error).toMatchObject({ code: 'platform-action.common.bad-request', statusCode: 400 });
  });

  it('answers a request without a handler with method-not-supported', async () => {
    const stream = await serve({});
    stream.send({ requestId: 4, predict: { data: { json: '{}' } } });
    stream.send({ requestId: 5, status: {} });
    stream.send({ requestId: 6, fit: { modelDir: 'd' } });
    stream.send({ requestId: 7, ext: { methodName: 'x' } });
    for (const id of [4, 5, 6, 7]) {
      const answer = await stream.waitForAnswer(id);
      expect(answer.error?.code).toBe('platform-action.common.method-not-supported');
      expect(answer.error?.statusCode).toBe(400);
    }
  });

  it('a failure in the middle of a stream ends it with an error', async () => {
    const stream = await serve({
      async *predict() {
        yield 1;
        yield 2;
        throw new ServiceError('platform-action.common.bad-request', 'stop here');
      },
    });
    stream.send({ requestId: 8, predict: { data: { json: '{}' } } });
    const answer = await stream.waitForAnswer(8);
    expect(answer.error?.code).toBe('platform-action.common.bad-request');
    expect(stream.messagesFor(8).map((m) => m.body)).toEqual(['partialPredict', 'partialPredict', 'error']);
  });
});

describe('partialPredict, ext, batch, fit, status', () => {
  it('delivers partialPredict messages of one requestId to one handler call until finish', async () => {
    const calls: string[][] = [];
    const stream = await serve({
      async *partialPredict(input) {
        const seen: string[] = [];
        calls.push(seen);
        for await (const chunk of input) {
          seen.push(chunk.data.json<string>());
          yield { echo: chunk.data.json<string>(), start: chunk.start, finish: chunk.finish };
        }
      },
    });
    stream.send({ requestId: 50, partialPredict: { start: true, data: { json: '"a"' } } });
    stream.send({ requestId: 50, partialPredict: { data: { json: '"b"' } } });
    stream.send({ requestId: 50, partialPredict: { finish: true, data: { json: '"c"' } } });
    const last = await stream.waitForAnswer(50);
    expect(calls).toEqual([['a', 'b', 'c']]);
    expect(JSON.parse(last.partialPredict?.data?.json ?? '')).toEqual({ echo: 'c', start: false, finish: true });
    const frames = stream.messagesFor(50);
    expect(frames).toHaveLength(3);
    expect(frames[0]?.partialPredict?.start).toBe(true);
  });

  it('chunks that arrive after the handler ended inside its input loop are dropped, not a second handler call', async () => {
    // A speech service that refused its config (thrown inside `for await`) got the caller's next
    // chunk, sent by the gateway before the refusal reached it, as a request of its own: a handler
    // with no start that waited for input until stop() gave up on it 20 s later.
    const starts: { requestId: number; first: boolean }[] = [];
    const stream = await serve({
      async *partialPredict(input, ctx) {
        for await (const chunk of input) {
          starts.push({ requestId: ctx.requestId, first: chunk.start });
          if (chunk.data.json<string>() === 'refuse') throw ServiceError.badRequest('not this language');
          if (chunk.data.json<string>() === 'enough') return;
          yield 'heard';
        }
      },
    });
    stream.send({ requestId: 60, partialPredict: { start: true, data: { json: '"refuse"' } } });
    expect((await stream.waitForAnswer(60)).body).toBe('error');
    stream.send({ requestId: 61, partialPredict: { start: true, data: { json: '"enough"' } } });
    expect((await stream.waitForAnswer(61)).partialPredict).toMatchObject({ start: true, finish: true });
    // The late chunks of both, and their finish (which a gateway may or may not still send).
    stream.send({ requestId: 60, partialPredict: { data: { json: '"late"' } } });
    stream.send({ requestId: 61, partialPredict: { data: { json: '"late"' } } });
    stream.send({ requestId: 61, partialPredict: { finish: true } });
    stream.send({ requestId: 62, partialPredict: { start: true, finish: true, data: { json: '"next"' } } });
    await stream.waitForAnswer(62);
    await sleep(50);
    expect(starts).toEqual([
      { requestId: 60, first: true },
      { requestId: 61, first: true },
      { requestId: 62, first: true },
    ]);
    expect(stream.messagesFor(60)).toHaveLength(1);
    expect(stream.messagesFor(61)).toHaveLength(1);
    // Nothing left in flight: stop() does not wait for a handler fed by the late chunks.
    const stopping = performance.now();
    await service!.stop();
    service = undefined;
    expect(performance.now() - stopping).toBeLessThan(5000);
  });

  it('a partialPredict handler returning one value answers with one start+finish frame', async () => {
    const stream = await serve({
      async partialPredict(input) {
        let text = '';
        for await (const chunk of input) text += chunk.data.json<string>();
        return text;
      },
    });
    stream.send({ requestId: 51, partialPredict: { start: true, data: { json: '"ab"' } } });
    stream.send({ requestId: 51, partialPredict: { finish: true } });
    const answer = await stream.waitForAnswer(51);
    expect(answer.partialPredict).toMatchObject({ start: true, finish: true, data: { json: '"ab"' } });
  });

  it('calls ext(methodName, params, ctx) with each parameter as the text the caller sent', async () => {
    const stream = await serve({
      ext(methodName, params) {
        if (methodName === 'echo') return params;
        if (methodName !== 'sum') throw ServiceError.methodNotSupported(methodName);
        return Number(params.a) + Number(params.b);
      },
    });
    stream.send({ requestId: 60, ext: { methodName: 'sum', params: { a: { json: '2' }, b: { json: '3', dataType: 'int' } } } });
    stream.send({ requestId: 61, ext: { methodName: 'nope' } });
    stream.send({ requestId: 62, ext: { methodName: 'echo', params: { a: { json: '1' }, b: { json: 'not json' }, c: {} } } });
    stream.send({ requestId: 63, ext: { methodName: 'echo', params: { a: { protobuf: Buffer.from([1]) } } } });
    expect((await stream.waitForAnswer(60)).ext?.data?.json).toBe('5');
    expect((await stream.waitForAnswer(61)).error?.code).toBe('platform-action.common.method-not-supported');
    // The handler's answer is what it returned: the strings, not a wrapper of the SDK's.
    expect(JSON.parse((await stream.waitForAnswer(62)).ext?.data?.json ?? '')).toEqual({ a: '1', b: 'not json', c: '' });
    expect((await stream.waitForAnswer(63)).error).toMatchObject({
      code: 'platform-action.common.bad-request',
      message: expect.stringContaining("'a'"),
    });
  });

  it('encodes a Payload inside a returned value as what it carries, never as the wrapper', async () => {
    const stream = await serve({ predict: (req) => ({ got: req.data, config: req.config ?? null }) });
    stream.send({ requestId: 64, predict: { data: { json: '{"x":1}' } } });
    expect(JSON.parse((await stream.waitForAnswer(64)).predict?.data?.json ?? '')).toEqual({ got: { x: 1 }, config: null });
  });

  it('answers a batch in one message, each item with its own requestId, result or error', async () => {
    const stream = await serve({
      batch(items) {
        return items.map((item) => {
          const n = item.data.json<number>();
          return n < 0 ? ServiceError.badRequest('negative') : n * 2;
        });
      },
    });
    stream.send({
      requestId: 70,
      batch: {
        data: [
          { requestId: 101, data: { json: '1' } },
          { requestId: 102, data: { json: '-1' } },
          { requestId: 103, data: { json: '5' } },
        ],
      },
    });
    const answer = await stream.waitForAnswer(70);
    expect(answer.body).toBe('batch');
    const items = answer.batch?.data ?? [];
    expect(items.map((i) => i.requestId)).toEqual([101, 102, 103]);
    expect(items[0]?.predict?.data?.json).toBe('2');
    expect(items[1]?.error?.code).toBe('platform-action.common.bad-request');
    expect(items[2]?.predict?.data?.json).toBe('10');
  });

  it('without a batch handler, runs batch items through predict', async () => {
    const stream = await serve({
      predict(req) {
        const n = req.data.json<number>();
        if (n === 0) throw new Error('zero');
        return n + 1;
      },
    });
    stream.send({
      requestId: 71,
      batch: {
        data: [
          { requestId: 1, data: { json: '1' } },
          { requestId: 2, data: { json: '0' } },
        ],
      },
    });
    const answer = await stream.waitForAnswer(71);
    expect(answer.batch?.data?.[0]).toMatchObject({ requestId: 1, predict: { data: { json: '2' } } });
    expect(answer.batch?.data?.[1]).toMatchObject({ requestId: 2, error: { code: 'platform-action.common.processing-exception' } });
  });

  it('fit reports progress as fitStatus frames, then sends an empty fit', async () => {
    let modelDir = '';
    const stream = await serve({
      async fit(req, ctx) {
        modelDir = req.modelDir;
        expect(req.trainData.json()).toEqual([1, 2]);
        for (const p of [10, 50, 100]) {
          ctx.progress(p);
          await sleep(5);
        }
      },
    });
    const start = await stream.waitFor((m) => m.body === 'startServing');
    expect(start.startServing?.serviceDescriptor?.fittable).toBe(true);
    stream.send({ requestId: 80, fit: { trainData: { json: '[1,2]' }, modelDir: '/models/1', datasetInfo: { datasetId: 3 } } });
    const answer = await stream.waitForAnswer(80);
    expect(answer.body).toBe('fit');
    const frames = stream.messagesFor(80);
    expect(frames.map((f) => f.body)).toEqual(['fitStatus', 'fitStatus', 'fitStatus', 'fit']);
    expect(frames.slice(0, 3).map((f) => f.fitStatus?.percentage)).toEqual([10, 50, 100]);
    expect(modelDir).toBe('/models/1');
  });

  it('a failing fit ends with an error', async () => {
    const stream = await serve({
      fit(_req, ctx) {
        ctx.progress(30);
        throw new Error('out of memory');
      },
    });
    stream.send({ requestId: 81, fit: { trainData: { json: '[]' }, modelDir: 'd' } });
    const answer = await stream.waitForAnswer(81);
    expect(answer.error?.code).toBe('platform-action.common.processing-exception');
    expect(stream.messagesFor(81).map((m) => m.body)).toEqual(['fitStatus', 'error']);
  });

  it('answers status with the status handler', async () => {
    const stream = await serve({ status: () => ({ connectedGates: ['g1'], connectedToAllGates: true }) });
    stream.send({ requestId: 90, status: {} });
    const answer = await stream.waitForAnswer(90);
    expect(answer.status).toEqual({ connectedGates: ['g1'], connectedToAllGates: true });
  });
});

describe('deferred billing', () => {
  it('sends deferredBillingCharge(s) with requestId 0 on a connected stream', async () => {
    const stream = await serve({});
    expect(service?.sendDeferredBillingCharge({ billingRequestId: 'b-1', amountInUnits: 12 })).toBe(true);
    expect(
      service?.sendDeferredBillingCharges({
        charges: [{ idempotencyKey: 'k', amount: 3, currency: 'USD' }],
        params: { callerAccountId: 9 },
      }),
    ).toBe(true);
    const one = await stream.waitFor((m) => m.body === 'deferredBillingCharge');
    expect(one.requestId ?? 0).toBe(0);
    expect(one.deferredBillingCharge).toEqual({ billingRequestId: 'b-1', amountInUnits: 12 });
    const many = await stream.waitFor((m) => m.body === 'deferredBillingCharges');
    expect(many.deferredBillingCharges).toMatchObject({
      charges: [{ idempotencyKey: 'k', amount: 3, currency: 'USD' }],
      params: { callerAccountId: 9 },
    });
  });
});
