import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { SdkLogger } from '../../sdk/index.js';
import {
  Payload,
  PayloadError,
  isPayloadProto,
  jsonPayload,
  protobufPayload,
  readJson,
  toApiErrorProto,
  ServiceError,
  traceContextOf,
} from '../../sdk/index.js';
import { Backoff } from '../../sdk/service/backoff.js';
import { AsyncQueue } from '../../sdk/service/async-queue.js';
import { EndedStreams } from '../../sdk/service/ended-streams.js';
import { toModelResponse } from '../../sdk/service/output.js';

describe('Backoff', () => {
  it('grows from 100 ms to 5 s by default and resets', () => {
    const backoff = new Backoff({ jitter: 0 });
    const delays = Array.from({ length: 9 }, () => backoff.next());
    expect(delays).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
    backoff.reset();
    expect(backoff.next()).toBe(100);
  });

  it('keeps jittered delays within bounds', () => {
    const backoff = new Backoff({ initialMs: 100, maxMs: 1000 });
    for (let i = 0; i < 50; i++) {
      const d = backoff.next();
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThanOrEqual(1000);
    }
  });
});

describe('payload helpers', () => {
  it('builds and reads JSON and protobuf payloads', () => {
    expect(jsonPayload({ a: 1 }, 'T')).toEqual({ dataType: 'T', json: '{"a":1}' });
    expect(protobufPayload(new Uint8Array([1, 2]))).toEqual({ protobuf: Buffer.from([1, 2]) });
    expect(readJson({ json: '[1]' })).toEqual([1]);
    expect(() => readJson({ json: '{' })).toThrow(PayloadError);
    expect(() => readJson({ protobuf: Buffer.from([1]) })).toThrow(/protobuf/);
    const p = new Payload({ dataType: 'X', protobuf: Buffer.from([7]), body: 'protobuf' });
    expect(p.kind).toBe('protobuf');
    expect(p.bytes).toEqual(Buffer.from([7]));
    expect(p.text).toBeUndefined();
    expect(new Payload().kind).toBe('empty');
  });

  it('tells payloads, responses and plain values apart', () => {
    expect(isPayloadProto({ json: '1' })).toBe(true);
    expect(isPayloadProto({ json: '1', other: 1 })).toBe(false);
    expect(isPayloadProto({ data: 1 })).toBe(false);
    expect(toModelResponse({ json: '1' })).toEqual({ data: { json: '1' } });
    expect(toModelResponse({ data: { json: '2' }, statusCode: 201 })).toEqual({ data: { json: '2' }, statusCode: 201 });
    expect(toModelResponse({ data: [1, 2] })).toEqual({ data: { json: '{"data":[1,2]}' } });
    expect(toModelResponse('text')).toEqual({ data: { json: '"text"' } });
    expect(toModelResponse(undefined)).toEqual({ data: { json: 'null' } });
    expect(toModelResponse(new Payload({ json: '3', body: 'json' }))).toEqual({ data: { json: '3' } });
  });
});

describe('logger', () => {
  it('accepts a pino logger and the console', () => {
    const loggers: SdkLogger[] = [pino({ level: 'silent' }), console];
    loggers[0]?.debug({ gateway: 'g' }, 'model-sdk: typed call');
    expect(loggers).toHaveLength(2);
  });
});

describe('error mapping', () => {
  it('maps ServiceError, PayloadError and anything else', () => {
    expect(toApiErrorProto(new ServiceError('platform-action.common.method-not-supported', 'no'))).toMatchObject({
      statusCode: 400,
      status: 'BAD_REQUEST',
    });
    expect(toApiErrorProto(new PayloadError('bad json'))).toMatchObject({ code: 'platform-action.common.bad-request', statusCode: 400 });
    expect(toApiErrorProto('weird')).toMatchObject({
      code: 'platform-action.common.processing-exception',
      message: 'weird',
      statusCode: 500,
    });
  });
});

describe('AsyncQueue', () => {
  it('delivers pushed items, then ends; fail() rejects the pending read', async () => {
    const q = new AsyncQueue<number>();
    q.push(1);
    setTimeout(() => {
      q.push(2);
      q.end();
    }, 5);
    const got: number[] = [];
    for await (const n of q) got.push(n);
    expect(got).toEqual([1, 2]);
    const failing = new AsyncQueue<number>();
    const reading = (async () => {
      for await (const _ of failing) {
        // nothing arrives
      }
    })();
    failing.fail(new Error('gone'));
    await expect(reading).rejects.toThrow('gone');
    expect(q.producerDone && failing.producerDone).toBe(true);
  });

  it('a consumer that leaves its loop early closes it without saying the producer is done', async () => {
    const q = new AsyncQueue<number>();
    q.push(1);
    q.push(2);
    for await (const n of q) if (n === 1) break;
    expect(q.closed).toBe(true);
    expect(q.producerDone).toBe(false);
    q.push(3);
    expect(await q[Symbol.asyncIterator]().next()).toEqual({ value: undefined, done: true });
  });
});

describe('EndedStreams', () => {
  it('forgets its oldest entries past its limit, so that finishes that never come cost nothing', () => {
    const ended = new EndedStreams(3);
    for (const id of [1, 2, 3, 4, 5]) ended.add(id);
    expect([1, 2, 3, 4, 5].map((id) => ended.has(id))).toEqual([false, false, true, true, true]);
    expect(ended.size).toBe(3);
    ended.delete(4);
    expect(ended.has(4)).toBe(false);
  });
});

describe('traceContextOf', () => {
  it('parses a valid W3C traceparent with its tracestate', () => {
    expect(traceContextOf({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'v=1' })).toEqual({
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      parentId: '00f067aa0ba902b7',
      sampled: true,
      tracestate: 'v=1',
    });
    expect(traceContextOf({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00' })?.sampled).toBe(false);
  });

  it('refuses a missing, malformed or all-zero traceparent', () => {
    expect(traceContextOf({})).toBeUndefined();
    expect(traceContextOf({ traceparent: '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01' })).toBeUndefined();
    expect(traceContextOf({ traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01' })).toBeUndefined();
    expect(traceContextOf({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01' })).toBeUndefined();
    expect(traceContextOf({ traceparent: 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' })).toBeUndefined();
  });
});
