import { afterEach, describe, expect, it } from 'vitest';
import type { ClientRequestProto, ClientResponseProto } from '../../proto/src/index.js';
import { GateClient, GateClientError } from '../../sdk/index.js';
import { HarnessGate, sleep, type ClientScript } from './support/harness-gate.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function setup(script: ClientScript): Promise<{ gate: HarnessGate; client: GateClient }> {
  const gate = await HarnessGate.start({ client: script });
  const client = new GateClient({ address: gate.address, authToken: 'key-1', account: 'acme', model: 'echo' });
  cleanup.push(
    () => gate.close(),
    () => client.close(),
  );
  return { gate, client };
}

const echo = (request: ClientRequestProto): ClientResponseProto => ({
  headers: { 'Z-requestId': 'r1' },
  predict: { data: { json: JSON.stringify({ got: JSON.parse(request.predict?.data?.json ?? 'null') }) } },
});

describe('GateClient.process', () => {
  it('sends account, model, authToken, timeoutSec and headers, and returns the answer', async () => {
    const { gate, client } = await setup({ process: echo });
    const response = await client.process(
      { predict: { data: { json: '{"a":1}' } } },
      { model: '42', timeoutSec: 7, headers: { 'PLATFORM-BILLING-KEY': 'b' } },
    );
    expect(response.body).toBe('predict');
    expect(response.headers).toEqual({ 'Z-requestId': 'r1' });
    expect(gate.clientRequests[0]).toMatchObject({
      account: 'acme',
      model: '42',
      authToken: 'key-1',
      timeoutSec: 7,
      headers: { 'PLATFORM-BILLING-KEY': 'b' },
      predict: { data: { json: '{"a":1}' } },
    });
  });

  it('predictJson encodes the input and decodes the answer', async () => {
    const { gate, client } = await setup({ process: echo });
    expect(await client.predictJson<{ got: unknown }>({ x: [1, 2] }, { config: { t: 0.5 }, dataType: 'In' })).toEqual({
      got: { x: [1, 2] },
    });
    expect(gate.clientRequests[0]?.predict).toMatchObject({ data: { dataType: 'In', json: '{"x":[1,2]}' }, config: { json: '{"t":0.5}' } });
  });

  it('rejects with GateClientError for an in-band error', async () => {
    const { client } = await setup({
      process: () => ({
        error: { code: 'platform.gate.model_not_found', message: 'no such model', statusCode: 404, args: { model: 'x' } },
      }),
    });
    const err = await client.predictJson({}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GateClientError);
    expect(err).toMatchObject({ code: 'platform.gate.model_not_found', message: 'no such model', statusCode: 404, args: { model: 'x' } });
  });

  it('uses the status enum when statusCode is absent', async () => {
    const { client } = await setup({ process: () => ({ error: { code: 'c', message: 'm', status: 'FORBIDDEN' } }) });
    await expect(client.process({ predict: { data: { json: '1' } } })).rejects.toMatchObject({ code: 'c', statusCode: 403 });
  });

  it('reports an unreadable answer as wrong-response and a passed deadline as timeout', async () => {
    const { client } = await setup({
      process: (request) => (request.model === 'slow' ? 'never' : { predict: { data: { protobuf: Buffer.from([1]) } } }),
    });
    await expect(client.predictJson({})).rejects.toMatchObject({ code: 'wrong-response' });
    await expect(client.predictJson({}, { model: 'slow', deadlineMs: 200 })).rejects.toMatchObject({ code: 'timeout', statusCode: 504 });
  });

  it('reports an unreachable gateway as UNAVAILABLE', async () => {
    const gate = await HarnessGate.start();
    const address = gate.address;
    await gate.close();
    const client = new GateClient({ address, authToken: 'k' });
    cleanup.push(() => client.close());
    await expect(client.predictJson({}, { deadlineMs: 3000 })).rejects.toMatchObject({
      code: expect.stringMatching(/UNAVAILABLE|timeout/),
    });
  });

  it('ext returns the ext answer', async () => {
    const { client } = await setup({ process: (r) => ({ ext: { data: { json: JSON.stringify(r.ext) } } }) });
    const response = await client.ext('sum', { a: '1', b: '{"n":2}' });
    expect(JSON.parse(response.data?.json ?? '')).toMatchObject({
      methodName: 'sum',
      params: { a: { json: '1' }, b: { json: '{"n":2}' } },
    });
  });
});

describe('GateClient.processResponseStream', () => {
  it('yields every answer frame', async () => {
    const { client } = await setup({
      processResponseStream: () => [
        { partialPredict: { start: true, data: { json: '1' } } },
        { partialPredict: { data: { json: '2' } } },
        { partialPredict: { finish: true, data: { json: '3' } } },
      ],
    });
    const frames: ClientResponseProto[] = [];
    for await (const frame of client.processResponseStream({ predict: { data: { json: '{}' } } })) frames.push(frame);
    expect(frames.map((f) => f.partialPredict?.data?.json)).toEqual(['1', '2', '3']);
    const values: number[] = [];
    for await (const value of client.predictJsonStream<number>({})) values.push(value);
    expect(values).toEqual([1, 2, 3]);
  });

  it('throws GateClientError on an error frame', async () => {
    const { client } = await setup({
      processResponseStream: () => [
        { partialPredict: { start: true, data: { json: '1' } } },
        { error: { code: 'platform-action.common.processing-exception', message: 'boom', statusCode: 500 } },
      ],
    });
    const seen: unknown[] = [];
    const err = await (async () => {
      for await (const value of client.predictJsonStream({})) seen.push(value);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([1]);
    expect(err).toMatchObject({ name: 'GateClientError', code: 'platform-action.common.processing-exception', statusCode: 500 });
  });
});

describe('GateClient.processStream', () => {
  it('writes requests and reads answers on one duplex stream', async () => {
    const { gate, client } = await setup({
      async processStream(requests, write) {
        let text = '';
        for await (const request of requests) {
          text += JSON.parse(request.partialPredict?.data?.json ?? '""') as string;
          write({ partialPredict: { data: { json: JSON.stringify(text) }, ...(request.partialPredict?.finish ? { finish: true } : {}) } });
        }
      },
    });
    const duplex = client.processStream({ model: 'asr', headers: { h: '1' } });
    duplex.writeJson('a', { start: true });
    duplex.writeJson('b');
    duplex.writeJson('c', { finish: true });
    duplex.end();
    const answers: string[] = [];
    for await (const value of duplex.json<string>()) answers.push(value);
    expect(answers).toEqual(['a', 'ab', 'abc']);
    expect(
      gate.clientRequests.map((r) => [
        r.model,
        r.authToken,
        r.headers?.h,
        r.partialPredict?.start ?? false,
        r.partialPredict?.finish ?? false,
      ]),
    ).toEqual([
      ['asr', 'key-1', '1', true, false],
      ['asr', 'key-1', '1', false, false],
      ['asr', 'key-1', '1', false, true],
    ]);
  });

  it('throws GateClientError on an error frame and cancels with the signal', async () => {
    const { client } = await setup({
      async processStream(requests, write) {
        for await (const request of requests) {
          if (request.partialPredict?.data?.json === '"bad"')
            write({ error: { code: 'platform-action.common.bad-request', message: 'bad', statusCode: 400 } });
          else write({ partialPredict: { data: { json: '"ok"' } } });
        }
      },
    });
    const duplex = client.processStream();
    duplex.writeJson('good');
    duplex.writeJson('bad');
    const err = await (async () => {
      for await (const _ of duplex) {
        // read until the error frame
      }
    })().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'platform-action.common.bad-request', statusCode: 400 });

    const controller = new AbortController();
    const second = client.processStream({ signal: controller.signal });
    second.writeJson('good');
    const reading = (async () => {
      for await (const _ of second) controller.abort();
    })().catch((e: unknown) => e);
    await sleep(10);
    expect(await reading).toMatchObject({ code: 'CANCELLED' });
  });
});
