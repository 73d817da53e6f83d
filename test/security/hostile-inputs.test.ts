/**
 * Issue 15, input and quota side: each attack reproduced on loopback against a real gateway (HTTP
 * and gRPC on 127.0.0.1, a scripted model service on the real Gate stream), asserting the coded
 * error, the bound that holds, and that other callers keep being served.
 */
import { Writable } from 'node:stream';
import { createHash } from 'node:crypto';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, processResponseStream, processUnary, rawClient, type RawClient } from '../support/raw-gate-client.js';
import { ScriptedService } from '../support/scripted-service.js';
import {
  ECHO_TOKEN,
  OTHER_ACCOUNT_KEY,
  TEST_KEY,
  eventually,
  startTestGateway,
  testConfigInput,
  type TestGateway,
} from '../support/gateway.js';
import { registryFixture } from '../support/registry-fixture.js';
import { tempDataDir } from '../plugins/fitting-support.js';

const SLOW_KEY = 'test-key-slow-account-000000001';
const FITTABLE_TOKEN = 'fittable-service-token-01';
const STORAGE_QUOTA = 2 * 1024 * 1024;
const STREAM_QUOTA = 3;
const LEDGER_BYTES = 1024 * 1024;
const SYNC = '/api/platformgate/account/demo/model/echo';
const ASYNC = '/api/platformgateway/account/demo/model/echo';
const GATE = '/api/platformgate';

/** Log lines the gateway writes, captured for the size checks. */
const logLines: string[] = [];
const capture = new Writable({
  write(chunk: Buffer, _enc, done) {
    logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  },
});

describe('hostile inputs and quotas (issue 15)', () => {
  let gw: TestGateway;
  let http: ReturnType<typeof request>;
  let service: ScriptedService;
  let client: RawClient;

  beforeAll(async () => {
    const input = testConfigInput({
      registry: registryFixture(),
      store: { kind: 'memory', dataDir: tempDataDir() },
      plugins: { enabled: ['sync-predict', 'async-predict', 'fitting'], options: { 'async-predict': { pollMs: 50 } } },
      limits: { storageBytesPerAccount: STORAGE_QUOTA, concurrentStreamsPerAccount: STREAM_QUOTA, billingLedgerBytes: LEDGER_BYTES },
    });
    Object.assign(input.services[0], { provider: 'acme', defaultModel: 'acme-chat' });
    input.services.push({
      id: 20,
      name: 'fittable',
      account: 'demo',
      public: true,
      fittable: true,
      connectionTokens: [{ token: FITTABLE_TOKEN }],
    });
    input.accounts.push({ id: 4, name: 'slowpoke', requestsPerSecond: 1 });
    input.apiKeys.push({ name: 'slow', account: 'slowpoke', key: SLOW_KEY, permissions: ['MODEL_REQUESTS', 'READ_DATA', 'MODIFY_DATA'] });
    gw = await startTestGateway(input, { logger: pino({ level: 'info' }, capture) });
    http = request(gw.httpUrl);
    service = new ScriptedService(gw.grpcAddress, ECHO_TOKEN);
    client = rawClient(gw.grpcAddress);
    await eventually(() => gw.gateway.gate.hasInstances(10), 5000, 'the echo service');
  });
  afterAll(async () => {
    service?.close();
    client?.close();
    await gw?.close();
  });

  /** Others keep being served: a plain sync predict still answers. */
  const stillServed = async () => {
    const res = await http
      .post(`${SYNC}/predict-with-config`)
      .set('PLATFORM-API-KEY', OTHER_ACCOUNT_KEY)
      .send({ data: { echo: 'alive' } })
      .expect(200);
    expect(res.body.echo).toBe('alive');
  };
  const lastReceived = () => service.received.at(-1)!;

  describe('item 4: only the gateway sets identity and billing headers', () => {
    const forged = {
      'z-calleraccountid': '999',
      'Z-requestId': 'forged-id',
      'platform-api-key-name': 'forged-key',
      'PLATFORM-ORIGIN-ACCOUNT-ID': '7',
      'PLATFORM-ORIGIN-API-KEY-NAME': 'forged',
      'PLATFORM-BILLING-ACCOUNT-ID': '7',
      'platform-billing-user-id': '8',
      'PLATFORM-BILLING-KEY-NAME': 'forged',
      'platform-fitted-model-dir': '/etc',
    };
    const expectGatewayHeaders = (headers: Record<string, string>, keyName: string) => {
      const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
      expect(Object.keys(lower)).toHaveLength(Object.keys(headers).length); // no case-variant duplicates
      expect(lower['z-calleraccountid']).toBe('1');
      expect(lower['platform-api-key-name']).toBe(keyName);
      expect(lower['z-requestid']).not.toBe('forged-id');
      for (const name of [
        'platform-origin-account-id',
        'platform-origin-api-key-name',
        'platform-billing-account-id',
        'platform-billing-user-id',
        'platform-billing-key-name',
        'platform-fitted-model-dir',
      ]) {
        expect(lower[name], name).toBeUndefined();
      }
    };

    it("gRPC process: the caller's forged headers are dropped in any letter case; its own pass", async () => {
      const res = await processUnary(client, {
        account: 'demo',
        model: 'echo',
        authToken: TEST_KEY,
        headers: { ...forged, 'PLATFORM-BILLING-KEY': 'bk-1', 'X-Trace': 't' },
        predict: { data: json({ echo: 1 }) },
      });
      expect(res.error).toBeUndefined();
      const { headers } = lastReceived();
      expectGatewayHeaders(headers, 'all');
      expect(headers['PLATFORM-BILLING-KEY']).toBe('bk-1');
      expect(headers['X-Trace']).toBe('t');
    });

    it('HTTP sync predict: billing and origin headers are not forwarded; PLATFORM-BILLING-KEY is', async () => {
      const req = http.post(`${SYNC}/predict-with-config`).set('PLATFORM-API-KEY', TEST_KEY).set('PLATFORM-BILLING-KEY', 'bk-2');
      for (const [k, v] of Object.entries(forged)) req.set(k, v);
      await req.send({ data: { echo: 2 } }).expect(200);
      const { headers } = lastReceived();
      expectGatewayHeaders(headers, 'all');
      expect(headers['PLATFORM-BILLING-KEY']).toBe('bk-2');
    });

    it("async predict: the worker sends the gateway's headers, with the creating key's name", async () => {
      const req = http.post(`${ASYNC}/async/predict-with-config`).set('PLATFORM-API-KEY', TEST_KEY);
      for (const [k, v] of Object.entries(forged)) req.set(k, v);
      const taskId = JSON.parse((await req.send({ data: { echo: 'task' } }).expect(200)).text) as string;
      await service.until(() => service.received.some((r) => r.headers['Z-requestId'] === taskId), 5000, 'the task');
      const { headers } = service.received.find((r) => r.headers['Z-requestId'] === taskId)!;
      expectGatewayHeaders(headers, 'all');
    });
  });

  describe('item 5: what is validated is what is forwarded', () => {
    const v2 = (config: string) =>
      http.post(`${SYNC}/predict-with-config-v2`).set('PLATFORM-API-KEY', TEST_KEY).send({ data: '{"echo":5}', config });

    it('__proto__, constructor and prototype keys are refused with a 400 naming the field, escaped or not', async () => {
      const before = service.received.length;
      const cases: Array<[string, string]> = [
        ['{"data":{},"config":{"__proto__":{"temperature":5}}}', 'config.__proto__'],
        ['{"data":{},"config":{"\\u005f_proto__":{"temperature":5}}}', 'config.__proto__'],
        ['{"data":{"a":[{"constructor":{"prototype":1}}]},"config":{}}', 'data.a[0].constructor'],
      ];
      for (const [body, param] of cases) {
        const res = await http
          .post(`${SYNC}/predict-with-config`)
          .set('PLATFORM-API-KEY', TEST_KEY)
          .set('Content-Type', 'application/json')
          .send(body)
          .expect(400);
        expect(res.body.error).toMatchObject({ code: 'JSON_KEY_FORBIDDEN', param });
      }
      expect((await v2('{"prototype": 1}').expect(400)).body.error).toMatchObject({
        code: 'JSON_KEY_FORBIDDEN',
        param: 'config.prototype',
      });
      const grpc = await processUnary(client, {
        account: 'demo',
        model: 'echo',
        authToken: TEST_KEY,
        predict: { data: json({}), config: { json: '{"__proto__": {"seed": 5}}' } },
      });
      expect(grpc.error).toMatchObject({ code: 'JSON_KEY_FORBIDDEN', statusCode: 400 });
      expect(service.received.length).toBe(before); // nothing reached the service
    });

    it('a number whose text a double cannot hold exactly is refused; exact spellings pass unchanged', async () => {
      const res = await v2('{"temperature": 2.0000000000000000001}').expect(400);
      expect(res.body.error).toMatchObject({ code: 'JSON_NUMBER_INEXACT', param: 'config.temperature' });
      expect((await v2('{"max_tokens": 12345678901234567890}').expect(400)).body.error.code).toBe('JSON_NUMBER_INEXACT');
      for (const config of [
        '{"temperature": 1.50}',
        '{"temperature": 1e0}',
        '{"temperature": 0.1}',
        '{"temperature": 0.30000000000000004}',
      ]) {
        await v2(config).expect(200);
        expect(lastReceived().predict.config?.json).toBe(config); // forwarded as sent, and it is what was checked
      }
    });
  });

  describe('item 6: a refused sweep names nothing the caller may not see', () => {
    it("sync predict over service IDs answers the spec's codes without naming private or derived services", async () => {
      const derived = await http
        .post(`${GATE}/account/demo/model/fittable/derived`)
        .set('PLATFORM-API-KEY', TEST_KEY)
        .send({ name: 'secret-derived-model' })
        .expect(200);
      const derivedId = derived.body.id.modelId as number;
      const texts: string[] = [];
      const statuses = new Set<number>();
      for (const id of [...Array.from({ length: 30 }, (_, i) => i + 1), derivedId - 1, derivedId, derivedId + 1]) {
        const res = await http
          .post(`/api/platformgate/account/1/model/${id}/predict-with-config`)
          .set('PLATFORM-API-KEY', OTHER_ACCOUNT_KEY)
          .send({ data: {} });
        statuses.add(res.status);
        if (res.status === 403) {
          expect(res.body.error.code).toBe('ACCESS_TO_ANOTHER_ACCOUNT_NOT_PUBLIC_DENIED');
          texts.push(res.text);
        }
      }
      expect(statuses.has(403)).toBe(true);
      expect(texts.length).toBeGreaterThanOrEqual(2); // the private service and the derived one
      for (const text of texts) {
        expect(text).not.toContain('private');
        expect(text).not.toContain('secret-derived-model');
      }
    });
  });

  describe('item 8: depth, dataType, byte order mark, raw bytes', () => {
    const deep = (n: number) => `{"data":${'['.repeat(n)}${']'.repeat(n)},"config":{}}`;

    it('100,000-deep JSON is a 400 JSON_TOO_DEEP on sync and async predict-with-config and dataset upload, and others are served', async () => {
      const body = deep(100_000);
      const targets = [`${SYNC}/predict-with-config`, `${ASYNC}/async/predict-with-config`, `${GATE}/account/demo/dataset`];
      for (const path of targets) {
        const res = await http.post(path).set('PLATFORM-API-KEY', TEST_KEY).set('Content-Type', 'application/json').send(body);
        expect(res.status, path).toBe(400);
        expect(res.body.error.code, path).toBe('JSON_TOO_DEEP');
      }
      const grpc = await processUnary(client, {
        account: 'demo',
        model: 'echo',
        authToken: TEST_KEY,
        predict: { data: json({}), config: { json: `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}` } },
      });
      expect(grpc.error).toMatchObject({ code: 'JSON_TOO_DEEP', statusCode: 400 });
      await stillServed();
    });

    it('a dataset dataType with U+0100, NUL or DEL is refused at upload; downloads keep working', async () => {
      for (const dataType of ['text/\u0100', 'text/a\u0000b', 'text/a\u007fb']) {
        const res = await http
          .post(`${GATE}/account/demo/dataset`)
          .set('PLATFORM-API-KEY', TEST_KEY)
          .send({ name: 'd', content: 'x', dataType })
          .expect(400);
        expect(res.body.error).toMatchObject({ code: 'VALIDATION_FAILED', param: 'dataType' });
        const raw = await http
          .post(`${GATE}/account/demo/dataset/raw`)
          .query({ name: 'd', dataType })
          .set('PLATFORM-API-KEY', TEST_KEY)
          .set('Content-Type', 'text/plain')
          .send('x')
          .expect(400);
        expect(raw.body.error).toMatchObject({ code: 'VALIDATION_FAILED', param: 'dataType' });
      }
      const ok = await http
        .post(`${GATE}/account/demo/dataset`)
        .set('PLATFORM-API-KEY', TEST_KEY)
        .send({ name: 'fine', content: 'hello', dataType: 'text/plain' })
        .expect(200);
      const id = ok.body.id.datasetId as number;
      expect((await http.get(`${GATE}/account/demo/dataset/${id}/content`).set('PLATFORM-API-KEY', TEST_KEY).expect(200)).text).toBe(
        'hello',
      );
      await http.delete(`${GATE}/account/demo/dataset/${id}`).set('PLATFORM-API-KEY', TEST_KEY).expect(204);
    });

    it('an async raw body starting with a UTF-8 byte order mark is a 400', async () => {
      // A string, not a Buffer: superagent would send a Buffer with a JSON Content-Type as {"type":"Buffer",…}.
      const res = await http
        .post(`${ASYNC}/async/predict`)
        .set('PLATFORM-API-KEY', TEST_KEY)
        .set('Content-Type', 'application/json')
        .send('\uFEFF{"echo":1}')
        .expect(400);
      expect(res.body.error).toMatchObject({ code: 'MALFORMED_JSON', param: 'body' });
    });

    it('sync raw predict passes bytes that are not UTF-8 through unchanged', async () => {
      const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x41, 0xc3, 0x28, 0x7d]);
      const res = await http
        .post(`${SYNC}/predict`)
        .set('PLATFORM-API-KEY', TEST_KEY)
        .set('Content-Type', 'text/plain')
        .send(bytes)
        .expect(200);
      expect(res.body).toEqual({ bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
    });
  });

  describe('item 3: quotas', () => {
    it("dataset uploads and derived-service creation count against the account's rate limit (429)", async () => {
      const upload = () =>
        http
          .post(`${GATE}/account/slowpoke/dataset`)
          .set('PLATFORM-API-KEY', SLOW_KEY)
          .send({ name: 'd', content: 'x'.repeat(1000) });
      const uploads = await Promise.all([upload(), upload(), upload()]);
      const limited = uploads.filter((r) => r.status === 429);
      expect(limited.length).toBeGreaterThanOrEqual(1);
      expect(limited[0]!.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
      const derive = (name: string) =>
        http.post(`${GATE}/account/demo/model/fittable/derived`).set('PLATFORM-API-KEY', SLOW_KEY).send({ name });
      const derived = await Promise.all([derive('s1'), derive('s2'), derive('s3')]);
      expect(derived.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(1);
      await stillServed();
    });

    it('stored bytes per account are capped (413 STORAGE_QUOTA_EXCEEDED) over datasets and async tasks; other accounts store on', async () => {
      const mib = 'x'.repeat(1024 * 1024);
      const first = await http
        .post(`${GATE}/account/demo/dataset/raw`)
        .query({ name: 'big' })
        .set('PLATFORM-API-KEY', TEST_KEY)
        .set('Content-Type', 'text/plain')
        .send(mib + mib.slice(0, 512 * 1024))
        .expect(200);
      // The attack: ten more uploads of 1 MiB, and async tasks, all refused; nothing more is kept.
      for (let i = 0; i < 10; i++) {
        const res = await http
          .post(`${GATE}/account/demo/dataset/raw`)
          .query({ name: `more-${i}` })
          .set('PLATFORM-API-KEY', TEST_KEY)
          .set('Content-Type', 'text/plain')
          .send(mib)
          .expect(413);
        expect(res.body.error.code).toBe('STORAGE_QUOTA_EXCEEDED');
      }
      const task = await http
        .post(`${ASYNC}/async/predict`)
        .set('PLATFORM-API-KEY', TEST_KEY)
        .set('Content-Type', 'application/json')
        .send(`{"echo":"${'y'.repeat(600 * 1024)}"}`)
        .expect(413);
      expect(task.body.error.code).toBe('STORAGE_QUOTA_EXCEEDED');
      expect(await gw.gateway.pipeline.storedBytes(1)).toBeLessThanOrEqual(STORAGE_QUOTA);
      // Another account is not affected.
      const other = await http
        .post(`${GATE}/account/other/dataset/raw`)
        .query({ name: 'theirs' })
        .set('PLATFORM-API-KEY', OTHER_ACCOUNT_KEY)
        .set('Content-Type', 'text/plain')
        .send(mib)
        .expect(200);
      // Deleting frees the quota.
      await http.delete(`${GATE}/account/demo/dataset/${first.body.id.datasetId}`).set('PLATFORM-API-KEY', TEST_KEY).expect(204);
      await http
        .post(`${GATE}/account/demo/dataset/raw`)
        .query({ name: 'again' })
        .set('PLATFORM-API-KEY', TEST_KEY)
        .set('Content-Type', 'text/plain')
        .send(mib)
        .expect(200)
        .then((r) => http.delete(`${GATE}/account/demo/dataset/${r.body.id.datasetId}`).set('PLATFORM-API-KEY', TEST_KEY).expect(204));
      await http.delete(`${GATE}/account/other/dataset/${other.body.id.datasetId}`).set('PLATFORM-API-KEY', OTHER_ACCOUNT_KEY).expect(204);
    });

    it('streams held open per account are capped (429 TOO_MANY_CONCURRENT_STREAMS); other accounts stream on, and a closed stream frees its slot', async () => {
      const held = Array.from({ length: STREAM_QUOTA }, (_, i) =>
        processResponseStream(client, { account: 'demo', model: 'echo', authToken: TEST_KEY, predict: { data: json({ hold: `s${i}` }) } }),
      );
      for (let i = 0; i < STREAM_QUOTA; i++) await service.heldRequest(`s${i}`);
      const refused = await processResponseStream(client, {
        account: 'demo',
        model: 'echo',
        authToken: TEST_KEY,
        predict: { data: json({ echo: 'one too many' }) },
      });
      expect(refused).toHaveLength(1);
      expect(refused[0]!.error).toMatchObject({ code: 'TOO_MANY_CONCURRENT_STREAMS', statusCode: 429 });
      const theirs = await processResponseStream(client, {
        account: 'demo',
        model: 'echo',
        authToken: OTHER_ACCOUNT_KEY,
        predict: { data: json({ echo: 'other account' }) },
      });
      expect(JSON.parse(theirs[0]!.predict!.data!.json!).echo).toBe('other account');
      service.release('s0');
      await held[0];
      const again = await processResponseStream(client, {
        account: 'demo',
        model: 'echo',
        authToken: TEST_KEY,
        predict: { data: json({ echo: 'slot freed' }) },
      });
      expect(JSON.parse(again[0]!.predict!.data!.json!).echo).toBe('slot freed');
      for (let i = 1; i < STREAM_QUOTA; i++) service.release(`s${i}`);
      await Promise.all(held);
    });

    it('the billing ledger is bounded by bytes and its log lines by size', async () => {
      const big = 'b'.repeat(400 * 1024);
      for (let i = 0; i < 5; i++) service.stream.send({ deferredBillingCharge: { billingRequestId: `${i}-${big}`, amountInUnits: i } });
      const ledger = gw.gateway.gate.billing;
      await eventually(
        () => logLines.filter((l) => l.includes('deferred billing charge recorded')).length >= 5,
        5000,
        'five billing log lines',
      );
      expect(ledger.bytes).toBeLessThanOrEqual(LEDGER_BYTES);
      expect(ledger.list().length).toBeLessThan(5);
      expect(ledger.list().at(-1)!.amountInUnits).toBe(4); // the newest are kept
      for (const line of logLines.filter((l) => l.includes('deferred billing charge recorded'))) expect(line.length).toBeLessThan(4096);
      await stillServed();
    });
  });
});
