/**
 * The async-predict plugin end to end: HTTP calls with supertest, a real gateway on loopback ports, and
 * a model service on the real gRPC stream (ScriptedService). Run once per task store by
 * async-predict.test.ts (memory) and async-predict-mongo.test.ts (MongoDB).
 */
import { createHash } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayError } from '../../core/errors.js';
import { DAY_MS } from '../../core/tasks/task-store.js';
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
import { ScriptedService } from '../support/scripted-service.js';

export const REQUESTS_ONLY_KEY = 'test-key-model-requests-only-01';
export const LIMITED_KEY = 'test-key-limited-account-000001';
export const OFFLINE_TOKEN = 'offline-service-token-01';
export const BATCH_TOKEN = 'batching-service-token-1';

export interface StoreHarness {
  /** `store` section of the gateway config (a fresh database for each call). */
  storeConfig(): Record<string, unknown>;
  /** Changes one byte of the stored file holding exactly `size` bytes (a request body or result). */
  corruptFileOfSize(gw: TestGateway, size: number): Promise<void>;
  /** Sizes of the payload files in file storage (GridFS or the data directory). */
  fileSizes(gw: TestGateway): Promise<number[]>;
  /** Whether two gateways can share one store (MongoDB): enables the cross-process tests. */
  shared: boolean;
}

const P = '/api/platformgateway';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Accounts, keys and services of the suite; `store` and plugin options vary. */
export function suiteConfig(store: Record<string, unknown>, options: Record<string, unknown> = {}): Record<string, any> {
  // A lease that runs out hands its task to a worker again (at-least-once), and the suite counts the
  // service's deliveries exactly: its lease (renewed every third of it) must outlast the stalls of a
  // loaded 2-core CI, where 1 s once re-delivered a held task on the MongoDB store.
  const input = testConfigInput({
    store,
    plugins: { enabled: ['async-predict'], options: { 'async-predict': { leaseMs: 3_000, pollMs: 50, ...options } } },
  });
  input.accounts.push({ id: 4, name: 'limited', requestsPerSecond: 2 });
  input.apiKeys.push(
    { name: 'requests-only', account: 'demo', key: REQUESTS_ONLY_KEY, permissions: ['MODEL_REQUESTS'] },
    { name: 'limited', account: 'limited', key: LIMITED_KEY, permissions: ['MODEL_REQUESTS', 'READ_DATA', 'MODIFY_DATA'] },
  );
  input.services[0].configs = [
    { id: 1, name: 'precise', default: true, config: { temperature: 0 } },
    { id: 2, name: 'creative', config: { temperature: 1.5 } },
  ];
  input.services.push(
    { id: 12, name: 'offline', account: 'demo', public: true, connectionTokens: [{ token: OFFLINE_TOKEN }] },
    { id: 13, name: 'batching', account: 'demo', public: true, batch: true, connectionTokens: [{ token: BATCH_TOKEN }] },
  );
  return input;
}

export function asyncPredictSuite(name: string, harness: StoreHarness): void {
  describe(`async-predict plugin (${name} store)`, () => {
    let gw: TestGateway;
    let service: ScriptedService;
    const http = () => request(gw.httpUrl);

    const create = (
      variant: '' | '-with-config' | '-with-config-v2',
      body: unknown,
      opts: { key?: string; account?: string; model?: string; query?: string; type?: string } = {},
    ) => {
      const path = `${P}/account/${opts.account ?? 'demo'}/model/${opts.model ?? 'echo'}/async/predict${variant}${opts.query ?? ''}`;
      const req = http()
        .post(path)
        .set('PLATFORM-API-KEY', opts.key ?? TEST_KEY);
      if (opts.type) req.set('Content-Type', opts.type);
      else if (variant === '' && typeof body === 'string') req.set('Content-Type', 'application/json');
      if (Buffer.isBuffer(body)) req.serialize((raw) => raw); // as is, even when the type says JSON
      return req.send(body as object);
    };
    const createdId = async (res: request.Response): Promise<string> => {
      expect(res.status, res.text).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toMatch(UUID);
      return res.body as string;
    };
    const status = (taskId: string, key = TEST_KEY, account = 'demo') =>
      http().get(`${P}/account/${account}/async/task/${taskId}`).set('PLATFORM-API-KEY', key);
    const result = (taskId: string, key = TEST_KEY, account = 'demo') =>
      http().get(`${P}/account/${account}/async/task/${taskId}/response`).set('PLATFORM-API-KEY', key);
    const cancel = (taskId: string, key = TEST_KEY, account = 'demo') =>
      http().post(`${P}/account/${account}/async/task/${taskId}/cancel`).set('PLATFORM-API-KEY', key);
    const statusOf = async (taskId: string, key = TEST_KEY, account = 'demo'): Promise<string> =>
      (await status(taskId, key, account)).body.status;
    const finished = async (taskId: string, key = TEST_KEY, account = 'demo') => {
      await eventually(
        async () => ['COMPLETED', 'CANCELED'].includes(await statusOf(taskId, key, account)),
        15_000,
        `task ${taskId} to finish`,
      );
      return (await status(taskId, key, account)).body;
    };
    const expectError = (res: request.Response, httpStatus: number, code: string) => {
      expect({ status: res.status, code: res.body?.error?.code }, res.text).toEqual({ status: httpStatus, code });
      expect(res.body.error).toMatchObject({ message: expect.any(String), type: expect.any(String) });
    };
    const lastReceived = () => service.received.at(-1)!;

    beforeAll(async () => {
      gw = await startTestGateway(suiteConfig(harness.storeConfig()));
      service = new ScriptedService(gw.grpcAddress, ECHO_TOKEN);
      await service.ready();
    });
    afterAll(async () => {
      service?.close();
      await gw?.close();
    });

    describe('lifecycle through a real model service', () => {
      it('raw async/predict: 204 while running, then COMPLETED and 200 with the service answer', async () => {
        const body = '{"hold": "raw-1", "x": [1, 2, 3]}';
        const taskId = await createdId(await create('', body, { query: '?configId=2&dataType=application/json' }));
        const requestId = await service.heldRequest('raw-1');
        const got = service.received.find((r) => r.requestId === requestId)!;
        expect(got.text).toBe(body); // the raw body, byte for byte
        expect(got.predict.data?.dataType).toBe('application/json');
        expect(got.predict.config?.json).toBe('{"temperature":1.5}');
        expect(got.headers['Z-requestId']).toBe(taskId);

        const running = await status(taskId);
        expect(running.status).toBe(200);
        expect(running.body).toEqual({ taskId, callerId: 1, status: 'PROCESSING', createdAt: expect.any(Number), completedAt: null });
        const pending = await result(taskId);
        expect(pending.status).toBe(204);
        expect(pending.text).toBe('');

        service.release('raw-1', { answer: 42 });
        const done = await finished(taskId);
        expect(done).toMatchObject({ status: 'COMPLETED', completedAt: expect.any(Number) });
        expect(done.completedAt).toBeGreaterThanOrEqual(done.createdAt);
        const res = await result(taskId);
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.body).toEqual({ answer: 42 });
      });

      it('predict-with-config: data and config objects; dataType passed on', async () => {
        const taskId = await createdId(
          await create('-with-config', {
            data: { echo: { q: 'hi' } },
            config: { temperature: 0.7 },
            dataType: 'https://specs/x.json#/Req',
          }),
        );
        expect(await finished(taskId)).toMatchObject({ status: 'COMPLETED' });
        expect(lastReceived().text).toBe('{"echo":{"q":"hi"}}');
        expect((await result(taskId)).body).toEqual({
          echo: { q: 'hi' },
          config: '{"temperature":0.7}',
          dataType: 'https://specs/x.json#/Req',
        });
      });

      it('predict-with-config-v2: data and config strings reach the service as given', async () => {
        const data = '{ "echo" : "spaced" }';
        const taskId = await createdId(await create('-with-config-v2', { data, config: '{"temperature": 1}' }));
        expect(await finished(taskId)).toMatchObject({ status: 'COMPLETED' });
        expect(lastReceived().text).toBe(data);
        expect((await result(taskId)).body).toEqual({ echo: 'spaced', config: '{"temperature": 1}', dataType: null });
      });

      it('without a config the service default config is sent, in every variant', async () => {
        const ids = [
          await createdId(await create('', '{"echo": 1}')),
          await createdId(await create('-with-config', { data: { echo: 2 } })),
          await createdId(await create('-with-config-v2', { data: '{"echo": 3}' })),
        ];
        for (const [i, taskId] of ids.entries()) {
          await finished(taskId);
          expect((await result(taskId)).body).toMatchObject({ echo: i + 1, config: '{"temperature":0}' });
        }
      });

      it('a binary raw body goes to the service as protobuf bytes', async () => {
        const bytes = Buffer.from([0, 1, 2, 250, 255, 10, 13]);
        const taskId = await createdId(await create('', bytes, { type: 'application/octet-stream', query: '?dataType=my.Proto' }));
        await finished(taskId);
        expect(lastReceived().predict.data).toMatchObject({ dataType: 'my.Proto', protobuf: bytes });
        expect((await result(taskId)).body).toEqual({ bytes: 7, sha256: createHash('sha256').update(bytes).digest('hex') });
      });

      it('an answer streamed as partialPredict frames is stored as a JSON array', async () => {
        const taskId = await createdId(await create('-with-config', { data: { stream: 3 } }));
        await finished(taskId);
        expect((await result(taskId)).body).toEqual([{ chunk: 0 }, { chunk: 1 }, { chunk: 2 }]);
      });

      it('a result over 150 characters goes to file storage and round-trips', async () => {
        const taskId = await createdId(await create('-with-config', { data: { big: 5000 } }));
        await finished(taskId);
        const res = await result(taskId);
        expect(res.text).toBe(JSON.stringify({ text: 'a'.repeat(5000) }));
        expect(await harness.fileSizes(gw)).toContain(res.text.length);
      });

      it('a several-MB body is stored and delivered byte for byte, and its mirrored result read back', async () => {
        const pad = 'xé€𝄞'.repeat(400_000); // multi-byte UTF-8: ~4 MB of text
        const body = `{"mirror": true, "pad": "${pad}"}`;
        const bytes = Buffer.from(body, 'utf8');
        const taskId = await createdId(await create('', body));
        await finished(taskId);
        const got = Buffer.from(lastReceived().text!, 'utf8');
        expect(got.length).toBe(bytes.length);
        expect(got.equals(bytes)).toBe(true);
        const res = await http()
          .get(`${P}/account/demo/async/task/${taskId}/response`)
          .set('PLATFORM-API-KEY', TEST_KEY)
          .buffer(true)
          .parse((r, cb) => {
            const chunks: Buffer[] = [];
            r.on('data', (c: Buffer) => chunks.push(c));
            r.on('end', () => cb(null, Buffer.concat(chunks)));
          });
        expect(res.status).toBe(200);
        expect((res.body as Buffer).equals(bytes)).toBe(true);
        expect(await harness.fileSizes(gw)).toContain(bytes.length);
      });

      it('the result is served with the status and allowed headers the service answered, as sync predict serves them', async () => {
        const frame = {
          headers: { 'x-model-version': '7', 'set-cookie': 'a=b' },
          predict: { data: { json: '{"made":true}' }, statusCode: 201, headers: { 'content-language': 'de', location: '/elsewhere' } },
        };
        const taskId = await createdId(await create('-with-config', { data: { frame } }));
        expect(await finished(taskId)).toMatchObject({ status: 'COMPLETED' });
        const res = await result(taskId);
        expect(res.status).toBe(201);
        expect(res.body).toEqual({ made: true });
        expect(res.headers).toMatchObject({ 'x-model-version': '7', 'content-language': 'de' });
        expect(res.headers['set-cookie']).toBeUndefined();
        expect(res.headers['location']).toBeUndefined();
      });

      it('an interim status from the service fails the task as the sync answer would (502)', async () => {
        const taskId = await createdId(
          await create('-with-config', { data: { frame: { predict: { data: { json: '1' }, statusCode: 103 } } } }),
        );
        expect(await finished(taskId)).toMatchObject({ status: 'CANCELED' });
        const res = await result(taskId);
        expect(res.status).toBe(502);
        expect(res.body.error.message).toMatch(/not a final HTTP status/);
      });

      it('a service error ends the task CANCELED; the result is that error with its status', async () => {
        const fail = { code: 'platform-action.common.bad-request', message: 'no such language', statusCode: 422, args: { lang: 'xx' } };
        const taskId = await createdId(await create('-with-config', { data: { fail } }));
        expect(await finished(taskId)).toMatchObject({ status: 'CANCELED', completedAt: expect.any(Number) });
        const res = await result(taskId);
        expect(res.status).toBe(422);
        expect(res.body).toEqual({
          error: { code: fail.code, message: fail.message, type: 'invalid_request_error', param: null, args: { lang: 'xx' } },
        });
      });

      it("a service error naming a parameter keeps it as the stored result's param", async () => {
        // The service names the field in args.param, as the SDKs do; the stored error lost it before.
        const fail = {
          code: 'platform-action.common.bad-request',
          message: 'no such language',
          statusCode: 400,
          args: { lang: 'xx', param: 'lang' },
        };
        const taskId = await createdId(await create('-with-config', { data: { fail } }));
        expect(await finished(taskId)).toMatchObject({ status: 'CANCELED' });
        const res = await result(taskId);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          error: {
            code: fail.code,
            message: fail.message,
            type: 'invalid_request_error',
            param: 'lang',
            args: { lang: 'xx', param: 'lang' },
          },
        });
      });

      it('a task whose service instance dies mid-task is dispatched again to the next instance', async () => {
        const taskId = await createdId(await create('-with-config', { data: { hold: 'dies' } }));
        await service.heldRequest('dies');
        const before = service.received.length;
        service.close(); // the only instance goes away with the request
        service = new ScriptedService(gw.grpcAddress, ECHO_TOKEN);
        await service.ready();
        await service.heldRequest('dies');
        expect(service.received.length).toBe(1);
        expect(before).toBeGreaterThan(0);
        service.release('dies', { second: true });
        expect(await finished(taskId)).toMatchObject({ status: 'COMPLETED' });
        expect((await result(taskId)).body).toEqual({ second: true });
      });
    });

    describe('cancel', () => {
      it('cancels a PROCESSING task: CANCELED at once, the service receives cancel, the result is 404', async () => {
        const taskId = await createdId(await create('-with-config', { data: { hold: 'to-cancel' } }));
        const requestId = await service.heldRequest('to-cancel');
        const res = await cancel(taskId);
        expect(res.status).toBe(200);
        expect(res.text).toBe('');
        expect(res.headers['content-type']).toBeUndefined();
        expect(await status(taskId)).toMatchObject({ body: { status: 'CANCELED', completedAt: expect.any(Number) } });
        await service.until(() => service.cancels.includes(requestId), 5_000, 'cancel');
        service.release('to-cancel', { late: true }); // a late answer changes nothing
        expectError(await result(taskId), 404, 'ENTITY_NOT_FOUND_BY_ID');
        expect(await statusOf(taskId)).toBe('CANCELED');
      });

      it('cancels a QUEUED task: it never reaches the service', async () => {
        // The limited account runs at most 2 tasks at once: the third waits QUEUED.
        const held = [];
        for (const key of ['q-a', 'q-b']) held.push(await createdId(await createAllowed({ data: { hold: key } })));
        await service.heldRequest('q-a');
        await service.heldRequest('q-b');
        const queued = await createdId(await createAllowed({ data: { hold: 'q-c' } }));
        expect(await statusOf(queued, LIMITED_KEY, 'limited')).toBe('QUEUED');
        expect((await cancel(queued, LIMITED_KEY, 'limited')).status).toBe(200);
        expect(await statusOf(queued, LIMITED_KEY, 'limited')).toBe('CANCELED');
        service.release('q-a');
        service.release('q-b');
        for (const id of held) await finished(id, LIMITED_KEY, 'limited');
        await new Promise((r) => setTimeout(r, 200)); // a poll or two: nothing picks the canceled task up
        expect(service.isHeld('q-c')).toBe(false);
        expect(service.received.some((r) => r.text?.includes('q-c'))).toBe(false);
        expectError(await result(queued, LIMITED_KEY, 'limited'), 404, 'ENTITY_NOT_FOUND_BY_ID');
      });

      it('cancelling a final task answers 200 and changes nothing', async () => {
        const taskId = await createdId(await create('-with-config', { data: { echo: 'kept' } }));
        const before = await finished(taskId);
        expect((await cancel(taskId)).status).toBe(200);
        expect((await status(taskId)).body).toEqual(before);
        expect((await result(taskId)).body).toMatchObject({ echo: 'kept' });
      });
    });

    /** Creates a task for the limited account (2 requests a second), waiting out its rate limit. */
    const createAllowed = async (body: unknown, variant: '-with-config' = '-with-config') => {
      for (;;) {
        const res = await create(variant, body, { key: LIMITED_KEY });
        if (res.body?.error?.code !== 'RATE_LIMIT_EXCEEDED') return res;
        await new Promise((r) => setTimeout(r, 100));
      }
    };

    describe('per-account limits', () => {
      it('runs at most min(rate, 50) tasks of an account at once and queues at most min(rate, 250)', async () => {
        const seen = service.received.length;
        const ids = [];
        for (const key of ['cap-1', 'cap-2', 'cap-3', 'cap-4']) ids.push(await createdId(await createAllowed({ data: { hold: key } })));
        await service.heldRequest('cap-1');
        await service.heldRequest('cap-2');
        await new Promise((r) => setTimeout(r, 200));
        expect(service.received.length - seen).toBe(2); // the running cap: 2
        expect(await Promise.all(ids.map((id) => statusOf(id, LIMITED_KEY, 'limited')))).toEqual([
          'PROCESSING',
          'PROCESSING',
          'QUEUED',
          'QUEUED',
        ]);
        expectError(await createAllowed({ data: { hold: 'cap-5' } }), 429, 'TOO_MANY_IDLE_ASYNC_TASKS');

        service.release('cap-1');
        await service.heldRequest('cap-3'); // a running slot freed: the oldest queued task starts
        expect(await statusOf(ids[3]!, LIMITED_KEY, 'limited')).toBe('QUEUED');
        await createdId(await createAllowed({ data: { hold: 'cap-6' } })); // and one queue place
        for (const key of ['cap-2', 'cap-3']) service.release(key);
        await service.heldRequest('cap-4');
        service.release('cap-4');
        await service.heldRequest('cap-6');
        service.release('cap-6');
      });

      it('counts creation against the requests-per-second setting (429 RATE_LIMIT_EXCEEDED)', async () => {
        await new Promise((r) => setTimeout(r, 1_100)); // a full bucket: 2 tokens
        const results = [];
        for (let i = 0; i < 4; i++) results.push(await create('-with-config', { data: { echo: i } }, { key: LIMITED_KEY }));
        const codes = results.map((r) => (r.status === 200 ? 'ok' : r.body.error.code));
        expect(codes.filter((c) => c === 'RATE_LIMIT_EXCEEDED').length).toBeGreaterThanOrEqual(1);
        expectError(
          results.find((r) => r.status === 429)!,
          429,
          'RATE_LIMIT_EXCEEDED',
        );
      });
    });

    describe('list', () => {
      const list = (query = '', key = TEST_KEY, account = 'demo') =>
        http().get(`${P}/account/${account}/async/tasks${query}`).set('PLATFORM-API-KEY', key);

      it("pages through the caller's own tasks, newest first, and no other account's", async () => {
        const ids: string[] = [];
        for (const n of [1, 2, 3]) {
          ids.push(await createdId(await create('-with-config', { data: { echo: n } })));
          await new Promise((r) => setTimeout(r, 2)); // distinct createdAt, so "newest" is this order
        }
        const theirs = await createdId(await create('-with-config', { data: { echo: 'theirs' } }, { key: OTHER_ACCOUNT_KEY }));
        const first = await list('?limit=2');
        expect(first.status).toBe(200);
        expect(first.body.tasks.map((t: { taskId: string }) => t.taskId)).toEqual([ids[2], ids[1]]);
        expect(first.body.tasks[0]).toEqual({
          taskId: ids[2],
          callerId: 1,
          status: expect.any(String),
          createdAt: expect.any(Number),
          completedAt: expect.toBeOneOf([null, expect.any(Number)]),
        });
        expect(first.body.next).toEqual(expect.any(String));
        const second = await list(`?limit=1&after=${encodeURIComponent(first.body.next)}`);
        expect(second.body.tasks.map((t: { taskId: string }) => t.taskId)).toEqual([ids[0]]);
        // The whole list of the account holds none of the other account's; theirs lists it.
        const all = await list('?limit=100');
        expect(all.body.tasks.map((t: { taskId: string }) => t.taskId)).not.toContain(theirs);
        expect((await list('', OTHER_ACCOUNT_KEY, 'other')).body.tasks.map((t: { taskId: string }) => t.taskId)).toContain(theirs);
      });

      it('refuses another account, a key without READ_DATA, a bad limit and a bad cursor', async () => {
        expectError(await list('', OTHER_ACCOUNT_KEY, 'demo'), 403, 'ACCESS_TO_ANOTHER_ACCOUNT_DENIED');
        expectError(await list('', REQUESTS_ONLY_KEY), 403, 'TOKEN_PERMISSION_REQUIRED');
        expectError(await list('', ''), 401, 'API_KEY_MISSING');
        for (const bad of ['?limit=0', '?limit=101', '?limit=x', '?limit=1&limit=2']) {
          const res = await list(bad);
          expectError(res, 400, 'VALIDATION_FAILED');
          expect(res.body.error.param).toBe('limit');
        }
        for (const bad of ['?after=x', '?after=1.not-a-task-id', `?after=${'9'.repeat(20)}.00000000-0000-0000-0000-000000000000`]) {
          const res = await list(bad);
          expectError(res, 400, 'VALIDATION_FAILED');
          expect(res.body.error.param).toBe('after');
        }
      });
    });

    describe('errors', () => {
      let otherTask: string;
      beforeAll(async () => {
        otherTask = await createdId(await create('-with-config', { data: { echo: 'theirs' } }, { key: OTHER_ACCOUNT_KEY }));
        await finished(otherTask, OTHER_ACCOUNT_KEY, 'other');
      });

      it.each([
        ['no key', { key: '' }, 401, 'API_KEY_MISSING'],
        ['unknown key', { key: 'no-such-key-000000000000' }, 401, 'API_KEY_INVALID'],
        ['blocked account', { key: BLOCKED_KEY }, 402, 'ACCOUNT_BLOCKED'],
        ['key without MODEL_REQUESTS', { key: READ_ONLY_KEY }, 403, 'TOKEN_PERMISSION_REQUIRED'],
        ['unknown account', { account: 'ghost' }, 400, 'ACCOUNT_NOT_FOUND'],
        ['unknown service', { model: 'ghost' }, 400, 'SERVICE_NOT_FOUND'],
        [
          'private service of another account',
          { model: 'private', key: OTHER_ACCOUNT_KEY },
          403,
          'ACCESS_TO_ANOTHER_ACCOUNT_NOT_PUBLIC_DENIED',
        ],
        ['service with no instance connected', { model: 'offline' }, 400, 'NO_ACTIVE_INSTANCES'],
      ])('creation: %s', async (_what, opts, httpStatus, code) => {
        for (const variant of ['', '-with-config', '-with-config-v2'] as const) {
          const body = variant === '' ? '{"echo":1}' : variant === '-with-config' ? { data: { echo: 1 } } : { data: '{"echo":1}' };
          expectError(await create(variant, body, opts), httpStatus, code);
        }
      });

      it.each([
        ['raw body that is not JSON', '', '{oops', {}, 'MALFORMED_JSON'],
        ['raw body that is not UTF-8', '', Buffer.from([0x22, 0xff, 0x22]), { type: 'application/json' }, 'MALFORMED_JSON'],
        ['empty raw body', '', '', {}, 'VALIDATION_FAILED'],
        ['configId that is not a number', '', '{}', { query: '?configId=abc' }, 'VALIDATION_FAILED'],
        ['unknown configId', '', '{}', { query: '?configId=99' }, 'UNKNOWN_CONFIG_ID'],
        ['object body without data', '-with-config', { config: {} }, {}, 'VALIDATION_FAILED'],
        ['object body with a string config', '-with-config', { data: {}, config: 'x' }, {}, 'VALIDATION_FAILED'],
        ['object body that is an array', '-with-config', [1], {}, 'VALIDATION_FAILED'],
        ['object body that is not JSON', '-with-config', '{"data":', { type: 'application/json' }, 'MALFORMED_JSON'],
        ['v2 body with object data', '-with-config-v2', { data: { a: 1 } }, {}, 'VALIDATION_FAILED'],
        ['v2 body whose config is not JSON', '-with-config-v2', { data: '{}', config: '{nope' }, {}, 'MALFORMED_JSON'],
        ['v2 body with a numeric dataType', '-with-config-v2', { data: '{}', dataType: 5 }, {}, 'VALIDATION_FAILED'],
      ] as const)('creation: 400 for a %s, and nothing is stored', async (_what, variant, body, opts, code) => {
        const queued = await gw.gateway.store.countQueued(1);
        const seen = service.received.length;
        expectError(await create(variant, body, opts), 400, code);
        expect(await gw.gateway.store.countQueued(1)).toBe(queued);
        expect(service.received.length).toBe(seen);
      });

      it('creation: data is checked against a dataType naming a published type (400 DATA_TYPE_MISMATCH)', async () => {
        const jsonArray = `${gw.httpUrl}/specs/common.json#/JsonArray`;
        const seen = service.received.length;
        expectError(await create('', '{"echo": 1}', { query: `?dataType=${encodeURIComponent(jsonArray)}` }), 400, 'DATA_TYPE_MISMATCH');
        expectError(await create('-with-config', { data: { echo: 1 }, dataType: jsonArray }), 400, 'DATA_TYPE_MISMATCH');
        expectError(await create('-with-config-v2', { data: '{"echo": 1}', dataType: jsonArray }), 400, 'DATA_TYPE_MISMATCH');
        expectError(
          await create('-with-config', { data: {}, dataType: `${gw.httpUrl}/specs/common.json#/NoSuchType` }),
          400,
          'UNKNOWN_DATA_TYPE',
        );
        expect(service.received.length).toBe(seen);
        const ok = await createdId(
          await create('-with-config', { data: { echo: 'typed' }, dataType: `${gw.httpUrl}/specs/common.json#/JsonObject` }),
        );
        expect(await finished(ok)).toMatchObject({ status: 'COMPLETED' });
      });

      it('creation: an empty v2 config means the service default', async () => {
        const taskId = await createdId(await create('-with-config-v2', { data: '{"echo": "d"}', config: '' }));
        await finished(taskId);
        expect((await result(taskId)).body).toMatchObject({ echo: 'd', config: '{"temperature":0}' });
      });

      it('creation: the predict config is validated (pipeline.validateConfig) before the task is stored', async () => {
        gw.gateway.pipeline.addValidator({
          validate(_service, config) {
            const t = (config as { temperature?: number }).temperature;
            if (typeof t === 'number' && t > 2)
              throw gatewayError('PARAMETER_OUT_OF_RANGE', { args: { param: 'temperature', reason: 'must be at most 2' } });
          },
        });
        const seen = service.received.length;
        const bad = await create('-with-config', { data: { echo: 1 }, config: { temperature: 3 } });
        expectError(bad, 400, 'PARAMETER_OUT_OF_RANGE');
        expect(bad.body.error.param).toBe('temperature');
        expectError(await create('-with-config-v2', { data: '{}', config: '{"temperature": 9}' }), 400, 'PARAMETER_OUT_OF_RANGE');
        expect(service.received.length).toBe(seen);
        await finished(await createdId(await create('-with-config', { data: { echo: 1 }, config: { temperature: 2 } })));
      });

      it('status, result and cancel: 404 ENTITY_NOT_FOUND_BY_ID for an unknown or malformed taskId', async () => {
        for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-task']) {
          expectError(await status(id), 404, 'ENTITY_NOT_FOUND_BY_ID');
          expectError(await result(id), 404, 'ENTITY_NOT_FOUND_BY_ID');
          expectError(await cancel(id), 404, 'ENTITY_NOT_FOUND_BY_ID');
        }
      });

      it("another account's task is refused: 403 ACCESS_TO_ANOTHER_ACCOUNT_DENIED, and it is not cancelled", async () => {
        expectError(await status(otherTask), 403, 'ACCESS_TO_ANOTHER_ACCOUNT_DENIED');
        expectError(await result(otherTask), 403, 'ACCESS_TO_ANOTHER_ACCOUNT_DENIED');
        expectError(await cancel(otherTask), 403, 'ACCESS_TO_ANOTHER_ACCOUNT_DENIED');
        // Naming the owner's account in the path does not help either: it is not the caller's.
        expectError(await status(otherTask, TEST_KEY, 'other'), 403, 'ACCESS_TO_ANOTHER_ACCOUNT_DENIED');
        expectError(await cancel(otherTask, TEST_KEY, 'other'), 403, 'ACCESS_TO_ANOTHER_ACCOUNT_DENIED');
        expect((await result(otherTask, OTHER_ACCOUNT_KEY, 'other')).body).toMatchObject({ echo: 'theirs' });
      });

      it("the path account must be the caller's, by name or by ID", async () => {
        const mine = await createdId(await create('-with-config', { data: { echo: 'mine' } }));
        expect((await status(mine, TEST_KEY, '1')).status).toBe(200);
        expectError(await status(mine, TEST_KEY, 'other'), 403, 'ACCESS_TO_ANOTHER_ACCOUNT_DENIED');
        expectError(await status(mine, TEST_KEY, 'ghost'), 403, 'ACCESS_TO_ANOTHER_ACCOUNT_DENIED');
        expectError(await result(mine, TEST_KEY, '2'), 403, 'ACCESS_TO_ANOTHER_ACCOUNT_DENIED');
      });

      it('permissions: READ_DATA for status and result, MODIFY_DATA for cancel (403 TOKEN_PERMISSION_REQUIRED)', async () => {
        const taskId = await createdId(await create('-with-config', { data: { echo: 'perm' } }, { key: REQUESTS_ONLY_KEY }));
        expectError(await status(taskId, REQUESTS_ONLY_KEY), 403, 'TOKEN_PERMISSION_REQUIRED');
        expectError(await result(taskId, REQUESTS_ONLY_KEY), 403, 'TOKEN_PERMISSION_REQUIRED');
        expectError(await cancel(taskId, REQUESTS_ONLY_KEY), 403, 'TOKEN_PERMISSION_REQUIRED');
        expectError(await cancel(taskId, READ_ONLY_KEY), 403, 'TOKEN_PERMISSION_REQUIRED');
        await finished(taskId, READ_ONLY_KEY);
        expect((await result(taskId, READ_ONLY_KEY)).body).toMatchObject({ echo: 'perm' });
        expectError(await status(taskId, ''), 401, 'API_KEY_MISSING');
        expectError(await status(taskId, BLOCKED_KEY, 'blocked'), 402, 'ACCOUNT_BLOCKED');
      });

      it('404 ASYNC_RESPONSE_IS_CORRUPTED when the stored result cannot be read', async () => {
        const taskId = await createdId(await create('-with-config', { data: { big: 7_777 } }));
        await finished(taskId);
        await harness.corruptFileOfSize(gw, JSON.stringify({ text: 'a'.repeat(7_777) }).length);
        expectError(await result(taskId), 404, 'ASYNC_RESPONSE_IS_CORRUPTED');
        expect(await statusOf(taskId)).toBe('COMPLETED');
      });

      it('404 ASYNC_REQUEST_BODY_WAS_LOST when the body cannot be restored for processing', async () => {
        // Both running places of the limited account are taken, so the task waits QUEUED meanwhile.
        for (const key of ['lost-a', 'lost-b']) await createdId(await createAllowed({ data: { hold: key } }));
        await service.heldRequest('lost-a');
        await service.heldRequest('lost-b');
        const body = JSON.stringify({ data: { echo: 'z'.repeat(300_000) } });
        const taskId = await createdId(await createAllowed(JSON.parse(body)));
        await harness.corruptFileOfSize(gw, JSON.stringify(JSON.parse(body).data).length);
        service.release('lost-a');
        service.release('lost-b');
        expect(await finished(taskId, LIMITED_KEY, 'limited')).toMatchObject({ status: 'CANCELED' });
        expectError(await result(taskId, LIMITED_KEY, 'limited'), 404, 'ASYNC_REQUEST_BODY_WAS_LOST');
      });
    });

    describe('retention', () => {
      it('after the retention the task is removed: status and result answer 404', async () => {
        const taskId = await createdId(await create('-with-config', { data: { big: 999 } }));
        await finished(taskId);
        const files = (await harness.fileSizes(gw)).length;
        expect(await gw.gateway.store.purgeExpired(Date.now() + 8 * DAY_MS)).toBeGreaterThan(0);
        expectError(await result(taskId), 404, 'ENTITY_NOT_FOUND_BY_ID');
        expectError(await status(taskId), 404, 'ENTITY_NOT_FOUND_BY_ID');
        expect((await harness.fileSizes(gw)).length).toBeLessThan(files);
      });
    });

    describe('with short limits', () => {
      let short: TestGateway;
      let shortService: ScriptedService | undefined;
      beforeAll(async () => {
        const store = { ...harness.storeConfig(), resultRetentionDays: 0.5 / (24 * 3600) }; // half a second
        short = await startTestGateway(suiteConfig(store, { taskTimeoutMs: 300, reaperIntervalMs: 100, acceptWithoutInstances: true }));
      });
      afterAll(async () => {
        shortService?.close();
        await short?.close();
      });
      const on = (method: 'get' | 'post', path: string) =>
        request(short.httpUrl)[method](`${P}/account/demo${path}`).set('PLATFORM-API-KEY', TEST_KEY);

      const createOnShort = async (data: unknown) =>
        createdId(
          await request(short.httpUrl)
            .post(`${P}/account/demo/model/echo/async/predict-with-config`)
            .set('PLATFORM-API-KEY', TEST_KEY)
            .send({ data }),
        );
      const connectShortService = async () => {
        shortService ??= new ScriptedService(short.grpcAddress, ECHO_TOKEN);
        await shortService.ready();
        return shortService;
      };

      it('with acceptWithoutInstances a task waits QUEUED until an instance connects', async () => {
        const taskId = await createOnShort({ echo: 'late' });
        await new Promise((r) => setTimeout(r, 200));
        expect((await on('get', `/async/task/${taskId}`)).body.status).toBe('QUEUED');
        await connectShortService();
        await eventually(async () => (await on('get', `/async/task/${taskId}`)).body.status === 'COMPLETED', 5_000, 'completion');
        expect((await on('get', `/async/task/${taskId}/response`)).body).toMatchObject({ echo: 'late' });
      });

      it('a service that does not answer within taskTimeoutMs: CANCELED, 504 PREDICT_TIMEOUT, and the service gets cancel', async () => {
        const svc = await connectShortService();
        const taskId = await createOnShort({ hold: 'slow' });
        const requestId = await svc.heldRequest('slow');
        await eventually(async () => (await on('get', `/async/task/${taskId}`)).body.status === 'CANCELED', 5_000, 'the timeout');
        expectError(await on('get', `/async/task/${taskId}/response`), 504, 'PREDICT_TIMEOUT');
        await svc.until(() => svc.cancels.includes(requestId), 5_000, 'cancel');
      });

      it('the plugin reaper removes final tasks past the retention', async () => {
        await connectShortService();
        const taskId = await createOnShort({ big: 500 });
        await eventually(async () => (await on('get', `/async/task/${taskId}`)).body.status === 'COMPLETED', 5_000, 'completion');
        await eventually(
          async () => (await on('get', `/async/task/${taskId}/response`)).body?.error?.code === 'ENTITY_NOT_FOUND_BY_ID',
          10_000,
          'the reaper',
        );
        expectError(await on('get', `/async/task/${taskId}`), 404, 'ENTITY_NOT_FOUND_BY_ID');
      });
    });

    // Batching needs tasks that wait for an instance, but not the short limits above: with a half-second
    // retention and a 300 ms task timeout, a busy machine could purge or time out a batch's results.
    describe('batch services', () => {
      let waiting: TestGateway;
      beforeAll(async () => {
        waiting = await startTestGateway(suiteConfig(harness.storeConfig(), { acceptWithoutInstances: true }));
      });
      afterAll(async () => {
        await waiting?.close();
      });
      const onWaiting = (method: 'get' | 'post', path: string) =>
        request(waiting.httpUrl)[method](`${P}/account/demo${path}`).set('PLATFORM-API-KEY', TEST_KEY);

      it('a batch service gets waiting tasks with the same config as one batch; each task gets its own item', async () => {
        const fail = { code: 'platform-action.common.bad-request', message: 'item refused', statusCode: 422 };
        const send = async (data: unknown, temperature: number) =>
          createdId(
            await request(waiting.httpUrl)
              .post(`${P}/account/demo/model/batching/async/predict-with-config`)
              .set('PLATFORM-API-KEY', TEST_KEY)
              .send({ data, config: { temperature } }),
          );
        const cool = [await send({ echo: 'c1' }, 0.1), await send({ fail }, 0.1), await send({ echo: 'c3' }, 0.1)];
        const warm = [await send({ echo: 'w1' }, 0.2), await send({ echo: 'w2' }, 0.2)];
        const batchService = new ScriptedService(waiting.grpcAddress, BATCH_TOKEN); // the tasks waited for an instance
        try {
          await batchService.until(() => batchService.batches.length === 2, 5_000, 'two batches');
          const sizes = batchService.batches.map((b) => [b.config, b.items.length]).sort();
          expect(sizes).toEqual([
            ['{"temperature":0.1}', 3],
            ['{"temperature":0.2}', 2],
          ]);
          expect(batchService.received).toHaveLength(0); // no single predict
          expect(batchService.batches.flatMap((b) => b.items.map((i) => i.headers['Z-requestId'])).sort()).toEqual(
            [...cool, ...warm].sort(),
          );
          for (const [taskId, echo, batchSize] of [
            [cool[0], 'c1', 3],
            [cool[2], 'c3', 3],
            [warm[0], 'w1', 2],
            [warm[1], 'w2', 2],
          ] as const) {
            await eventually(async () => (await onWaiting('get', `/async/task/${taskId}`)).body.status === 'COMPLETED', 5_000, echo);
            expect((await onWaiting('get', `/async/task/${taskId}/response`)).body).toMatchObject({ echo, batchSize });
          }
          await eventually(
            async () => (await onWaiting('get', `/async/task/${cool[1]}`)).body.status === 'CANCELED',
            5_000,
            'the failed item',
          );
          expectError(await onWaiting('get', `/async/task/${cool[1]}/response`), 422, fail.code);
        } finally {
          batchService.close();
        }
      });
    });

    // Only a shared store (MongoDB) can serve two gateways; the memory suite does not register these
    // at all rather than count them as skipped.
    if (harness.shared)
      describe('two gateway processes on one store', () => {
        let second: TestGateway;
        let secondService: ScriptedService;
        beforeAll(async () => {
          const input = suiteConfig(gw.gateway.config.store as unknown as Record<string, unknown>);
          second = await startTestGateway(input);
          secondService = new ScriptedService(second.grpcAddress, ECHO_TOKEN);
          await secondService.ready();
        });
        afterAll(async () => {
          secondService?.close();
          await second?.close();
        });

        it('a task created on one gateway is read and cancelled on the other; its worker stops it at the next renewal', async () => {
          const res = await request(second.httpUrl)
            .post(`${P}/account/demo/model/echo/async/predict-with-config`)
            .set('PLATFORM-API-KEY', TEST_KEY)
            .send({ data: { hold: 'x-proc' } });
          const taskId = await createdId(res);
          // Whichever gateway's worker claimed it, its service instance holds it.
          await eventually(() => service.isHeld('x-proc') || secondService.isHeld('x-proc'), 10_000, 'dispatch');
          const runner = service.isHeld('x-proc') ? service : secondService;
          const other = runner === service ? second : gw; // the gateway that does not run it
          const requestId = await runner.heldRequest('x-proc');
          expect(
            (await request(other.httpUrl).get(`${P}/account/demo/async/task/${taskId}`).set('PLATFORM-API-KEY', TEST_KEY)).body.status,
          ).toBe('PROCESSING');
          expect(
            (await request(other.httpUrl).post(`${P}/account/demo/async/task/${taskId}/cancel`).set('PLATFORM-API-KEY', TEST_KEY)).status,
          ).toBe(200);
          await runner.until(() => runner.cancels.includes(requestId), 5_000, 'cancel from the other process');
          expect(await statusOf(taskId)).toBe('CANCELED');
        });

        it('a gateway shut down mid-task releases its lease: another gateway claims the task at once and completes it', async () => {
          // A lease far longer than the wait below: only the release on close lets the task move on in time.
          const input = suiteConfig(gw.gateway.config.store as unknown as Record<string, unknown>, { leaseMs: 60_000 });
          input.gate.drainTimeoutMs = 100;
          const leaving = await startTestGateway(input);
          // Only the leaving gateway has an instance of 'offline', so its worker runs the task.
          const leavingService = new ScriptedService(leaving.grpcAddress, OFFLINE_TOKEN);
          await leavingService.ready();
          const res = await request(leaving.httpUrl)
            .post(`${P}/account/demo/model/offline/async/predict-with-config`)
            .set('PLATFORM-API-KEY', TEST_KEY)
            .send({ data: { hold: 'handover' } });
          const taskId = await createdId(res);
          await leavingService.heldRequest('handover');
          await leaving.close();
          leavingService.close();
          expect(await statusOf(taskId)).toBe('PROCESSING'); // not failed: left to another gateway

          const staying = new ScriptedService(gw.grpcAddress, OFFLINE_TOKEN);
          try {
            await staying.heldRequest('handover', 10_000); // claimed again long before the 60 s lease would run out
            staying.release('handover', { handedOver: true });
            expect(await finished(taskId)).toMatchObject({ status: 'COMPLETED' });
            expect((await result(taskId)).body).toEqual({ handedOver: true });
          } finally {
            staying.close();
          }
        });

        it('the caps hold across both gateways', async () => {
          const createOn = async (g: TestGateway, key: string) => {
            for (;;) {
              const res = await request(g.httpUrl)
                .post(`${P}/account/demo/model/echo/async/predict-with-config`)
                .set('PLATFORM-API-KEY', LIMITED_KEY)
                .send({ data: { hold: key } });
              if (res.body?.error?.code !== 'RATE_LIMIT_EXCEEDED') return res;
              await new Promise((r) => setTimeout(r, 100));
            }
          };
          const all = [service, secondService];
          const heldCount = (prefix: string) =>
            all.reduce((n, s) => n + ['1', '2', '3', '4', '5'].filter((k) => s.isHeld(prefix + k)).length, 0);
          for (const [i, g] of [gw, second, gw, second].entries()) await createdId(await createOn(g, `both-${i + 1}`));
          await eventually(() => heldCount('both-') === 2, 10_000, 'two running');
          await new Promise((r) => setTimeout(r, 300));
          expect(heldCount('both-')).toBe(2); // running cap 2 over both processes
          expectError(await createOn(second, 'both-5'), 429, 'TOO_MANY_IDLE_ASYNC_TASKS'); // 2 queued over both
          for (let k = 1; k <= 4; k++) {
            const key = `both-${k}`;
            await eventually(() => all.some((s) => s.isHeld(key)), 10_000, key);
            all.find((s) => s.isHeld(key))!.release(key);
          }
        });
      });
  });
}
