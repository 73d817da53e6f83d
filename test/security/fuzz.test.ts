/**
 * Fuzzing every HTTP body and every gRPC message type of one real gateway (issue 15, "keep a fuzz
 * test in the suite"), with fast-check: random JSON (deep, with odd keys and numbers), random bytes,
 * and structured-but-hostile protobuf messages. Bounded in count and time per property, so it stays
 * a few seconds in `npm test`; a failure prints fast-check's seed and shrunk counterexample.
 *
 * The properties: no 5xx from the gateway's own handling (the one 5xx allowed is a chat adapter's
 * 503 NO_ACTIVE_INSTANCES, its documented answer when no instance is connected), every error is a
 * coded envelope, gRPC calls end (in-band error, answer or gRPC status) instead of hanging, and the
 * gateway keeps serving afterwards.
 */
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_TOKEN, TEST_KEY, eventually, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { RawServiceStream, json, processUnary, rawClient, startOkService, type RawClient } from '../support/raw-gate-client.js';
import { registryFixture } from '../support/registry-fixture.js';
import { tempDataDir } from '../plugins/fitting-support.js';

/** Per property: at most this many runs, and at most this long. */
const RUNS = { numRuns: 60, interruptAfterTimeLimit: 8_000 } as const;
/** The HTTP property covers 17 routes and 5 content types: more runs, the same time bound. */
const HTTP_RUNS = { numRuns: 200, interruptAfterTimeLimit: 12_000 } as const;
const CALL_DEADLINE_MS = 5_000;

const SYNC = '/api/platformgate/account/demo/model/echo';
const ASYNC = '/api/platformgateway/account/demo/model/echo';
const GATE = '/api/platformgate/account/demo';
const CHAT = '/api/adapters/chatapi/v1';

/** Every POST body the gateway reads, and the Content-Type it is usually sent with. */
const HTTP_BODIES: Array<{ path: string; auth: 'platform' | 'bearer' }> = [
  { path: `${SYNC}/predict`, auth: 'platform' },
  { path: `${SYNC}/predict-with-config`, auth: 'platform' },
  { path: `${SYNC}/predict-with-config-v2`, auth: 'platform' },
  { path: `${SYNC}/ext`, auth: 'platform' },
  { path: `${ASYNC}/async/predict`, auth: 'platform' },
  { path: `${ASYNC}/async/predict-with-config`, auth: 'platform' },
  { path: `${ASYNC}/async/predict-with-config-v2`, auth: 'platform' },
  { path: `${GATE}/model/fittable/derived`, auth: 'platform' },
  { path: `${GATE}/model/fittable/fit`, auth: 'platform' },
  { path: `${GATE}/dataset`, auth: 'platform' },
  { path: `${GATE}/dataset/raw?name=fuzz`, auth: 'platform' },
  { path: `${CHAT}/chat/completions`, auth: 'bearer' },
  { path: `${CHAT}/completions`, auth: 'bearer' },
  { path: `${CHAT}/embeddings`, auth: 'bearer' },
  { path: '/api/adapters/chatapi-direct/v1/chat/completions', auth: 'bearer' },
  { path: `${CHAT}/audio/speech`, auth: 'bearer' },
  { path: `${CHAT}/audio/transcriptions`, auth: 'bearer' },
];

/** JSON a hostile caller would send: deep nesting, prototype keys, long and inexact numbers, odd strings. */
const hostileJson: fc.Arbitrary<string> = fc.oneof(
  fc.json({ depthSize: 'medium' }),
  fc.jsonValue().map((v) => JSON.stringify({ data: v, config: v, model: 'demo/lonely', messages: v, input: v })),
  fc
    .constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty')
    .chain((k) =>
      fc
        .jsonValue()
        .map(
          (v) =>
            `{"data":{"${k}":${JSON.stringify(v)}},"config":{"${k}":{"temperature":5}},"model":"demo/lonely","name":"n","content":"c"}`,
        ),
    ),
  fc
    .oneof(fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 5_000, max: 200_000 }))
    .map((n) => `{"data":${'['.repeat(n)}${']'.repeat(n)}}`),
  fc
    .stringMatching(/^-?[0-9]{1,40}(\.[0-9]{1,40})?([eE][-+]?[0-9]{1,4})?$/)
    .map(
      (n) => `{"data":{"x":${n}},"config":{"temperature":${n}},"model":"demo/lonely","messages":[],"name":"n${n.length}","content":${n}}`,
    ),
  fc
    .string({ unit: 'binary' })
    .map((s) => JSON.stringify({ data: s, config: s, model: s, name: s, content: s, dataType: s, methodName: s })),
);

const anyBytes = fc.uint8Array({ maxLength: 2048 }).map((a) => Buffer.from(a));

describe('fuzz: every HTTP body and gRPC message type', () => {
  let gw: TestGateway;
  let service: RawServiceStream;
  let serviceClient: RawClient;
  let client: RawClient;

  beforeAll(async () => {
    const input = testConfigInput({
      registry: registryFixture(),
      store: { kind: 'memory', dataDir: tempDataDir() },
      plugins: {
        enabled: [
          'sync-predict',
          'async-predict',
          'fitting',
          'chatapi',
          'chatapi-direct',
          'audio-speech',
          'audio-transcriptions',
          'model-registry',
          'specs',
          'health',
        ],
        options: { 'async-predict': { acceptWithoutInstances: true } },
      },
    });
    Object.assign(input.services[0], { provider: 'acme', defaultModel: 'acme-chat' });
    input.services.push(
      { id: 13, name: 'lonely', account: 'demo', public: true },
      { id: 20, name: 'fittable', account: 'demo', public: true, fittable: true },
    );
    gw = await startTestGateway(input);
    // A service that answers every predict with a fixed small answer without reading the data: the
    // fuzz is about the gateway, and a test service that parsed hostile data could itself fall over.
    serviceClient = rawClient(gw.grpcAddress);
    service = startOkService(serviceClient, ECHO_TOKEN, 'fuzz-echo', { forget: true }); // nothing reads its queue
    client = rawClient(gw.grpcAddress);
    await eventually(() => gw.gateway.gate.hasInstances(10), 5000, 'the echo service');
  });
  afterAll(async () => {
    service?.close();
    serviceClient?.close();
    client?.close();
    await gw?.close();
  });

  const stillServing = async () => {
    const res = await processUnary(client, {
      account: 'demo',
      model: 'echo',
      authToken: TEST_KEY,
      predict: { data: json({ echo: 'after fuzz' }) },
    });
    expect(res.error).toBeUndefined();
    expect(JSON.parse(res.predict!.data!.json!)).toEqual({ ok: true });
  };

  const expectCoded = (status: number, body: unknown, what: string) => {
    const error = (body as { error?: { code?: unknown } } | undefined)?.error;
    // No instance: the platform API's NO_ACTIVE_INSTANCES, the chat adapters' SERVICE_UNAVAILABLE (Retry-After).
    const allowed503 = status === 503 && (error?.code === 'NO_ACTIVE_INSTANCES' || error?.code === 'SERVICE_UNAVAILABLE');
    expect(status < 500 || allowed503, `${what}: ${status} ${JSON.stringify(body).slice(0, 300)}`).toBe(true);
    if (status >= 400) expect(typeof error?.code, `${what}: an error without a code`).toBe('string');
  };

  it('HTTP: random and hostile bodies, as JSON and as bytes, to every POST route', async () => {
    const http = request(gw.httpUrl);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...HTTP_BODIES),
        fc.oneof(
          hostileJson.map((text) => ({ text, bytes: undefined })),
          anyBytes.map((bytes) => ({ text: undefined, bytes })),
        ),
        fc.constantFrom(
          'application/json',
          'text/plain',
          'application/octet-stream',
          'multipart/form-data; boundary=x',
          'application/json; charset=latin1',
        ),
        async (route, body, contentType) => {
          const req = http.post(route.path).set('Content-Type', contentType);
          if (route.auth === 'platform') req.set('PLATFORM-API-KEY', TEST_KEY);
          else req.set('Authorization', `Bearer ${TEST_KEY}`);
          const res = await req.send(body.text ?? body.bytes!);
          expectCoded(res.status, res.body, `${route.path} (${contentType})`);
        },
      ),
      HTTP_RUNS,
    );
    await stillServing();
  });

  /** A client whose messages are raw bytes, so the gateway must decode whatever comes. */
  const RawBytesClient = grpc.makeGenericClientConstructor(
    {
      process: method('process', false, false),
      processResponseStream: method('processResponseStream', false, true),
      processStream: method('processStream', true, true),
      processSynthesis: method('processSynthesis', false, true),
      processRecognition: method('processRecognition', true, true),
      processAsync: method('processAsync', true, true),
      healthCheck: method('healthCheck', false, false),
    },
    'Gate',
  );

  it('gRPC: random bytes as every message type end in an error, never a hang or a crash', async () => {
    const raw = new RawBytesClient(gw.grpcAddress, grpc.credentials.createInsecure()) as unknown as Record<
      string,
      (...a: unknown[]) => any
    >;
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(
            'process',
            'processResponseStream',
            'processStream',
            'processSynthesis',
            'processRecognition',
            'processAsync',
            'healthCheck',
          ),
          fc.array(anyBytes, { minLength: 1, maxLength: 3 }),
          async (name, messages) => {
            await settles(raw, name, messages);
          },
        ),
        RUNS,
      );
    } finally {
      (raw as unknown as grpc.Client).close();
    }
    await stillServing();
  });

  it('gRPC: structured hostile ClientRequestProto (keys, headers, configs, timeouts) gets answers or coded errors', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          account: fc.oneof(fc.constantFrom('demo', '1', 'other', ''), fc.string()),
          model: fc.oneof(fc.constantFrom('echo', '10', 'private', 'lonely', ''), fc.string()),
          authToken: fc.constantFrom(TEST_KEY, '', 'not-a-key'),
          timeoutSec: fc.integer({ min: -3, max: 3 }),
          headers: fc.dictionary(
            fc.oneof(fc.constantFrom('Z-requestId', 'z-calleraccountid', 'PLATFORM-BILLING-ACCOUNT-ID', 'x'), fc.string({ minLength: 1 })),
            fc.string(),
            { maxKeys: 8 },
          ),
          data: hostileJson,
          config: fc.option(hostileJson, { nil: undefined }),
        }),
        async (r) => {
          const res = await withDeadline(
            processUnary(client, {
              account: r.account,
              model: r.model,
              authToken: r.authToken,
              timeoutSec: r.timeoutSec,
              headers: r.headers,
              predict: { data: { json: r.data }, ...(r.config !== undefined ? { config: { json: r.config } } : {}) },
            }),
            'process',
          ).catch((err: grpc.ServiceError) => err);
          if (res instanceof Error) {
            // A message over 16 KiB with a missing or wrong key is refused from its first bytes with a coded status.
            expect(res.code, res.message).toBe(grpc.status.UNAUTHENTICATED);
            expect(res.details).toMatch(/^API_KEY_(MISSING|INVALID): /);
          } else if (res.error) {
            expect(res.error.code).toEqual(expect.any(String));
            expect(res.error.statusCode ?? 0, JSON.stringify(res.error)).toBeLessThan(500);
          } else {
            expect(res.predict).toBeDefined();
          }
        },
      ),
      RUNS,
    );
    await stillServing();
  });
});

function method(name: string, requestStream: boolean, responseStream: boolean): grpc.MethodDefinition<Buffer, Buffer> {
  return {
    path: `/com.platform.gate.Gate/${name}`,
    requestStream,
    responseStream,
    requestSerialize: (b: Buffer) => b,
    requestDeserialize: (b: Buffer) => b,
    responseSerialize: (b: Buffer) => b,
    responseDeserialize: (b: Buffer) => b,
  };
}

/** Sends `messages` on method `name` and resolves once the call ends, whatever way; fails on a hang. */
function settles(raw: Record<string, (...a: unknown[]) => any>, name: string, messages: Buffer[]): Promise<void> {
  const deadline = { deadline: Date.now() + CALL_DEADLINE_MS };
  return new Promise<void>((resolve, reject) => {
    const statusOk = (status: grpc.StatusObject) => {
      if (status.code === grpc.status.DEADLINE_EXCEEDED) reject(new Error(`${name} hung until its deadline`));
      else resolve();
    };
    if (name === 'process' || name === 'healthCheck') {
      const call = raw[name]!(messages[0], new grpc.Metadata(), deadline, () => undefined);
      call.on('status', statusOk);
      return;
    }
    if (name === 'processResponseStream' || name === 'processSynthesis') {
      const call = raw[name]!(messages[0], new grpc.Metadata(), deadline);
      call.on('data', () => undefined);
      call.on('error', () => undefined);
      call.on('status', statusOk);
      return;
    }
    const call = raw[name]!(new grpc.Metadata(), deadline);
    call.on('data', () => undefined);
    call.on('error', () => undefined);
    call.on('status', (status: grpc.StatusObject) => {
      // A service stream (processAsync) that never registers is the gateway's to close; a deadline
      // there means only that it stayed open for the client's 5 s, which sec-relays bounds.
      if (name === 'processAsync') resolve();
      else statusOk(status);
    });
    for (const m of messages) call.write(m);
    call.end();
  });
}

function withDeadline<T>(promise: Promise<T>, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not answer within ${CALL_DEADLINE_MS} ms`)), CALL_DEADLINE_MS);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e as Error);
      },
    );
  });
}
