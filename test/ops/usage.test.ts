import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoService } from '../../examples/echo-service/service.js';
import { silentLogger, type ModelService } from '../../sdk/index.js';
import {
  ECHO_TOKEN,
  OTHER_ACCOUNT_KEY,
  PRIVATE_TOKEN,
  READ_ONLY_KEY,
  TEST_KEY,
  eventually,
  startTestGateway,
  testConfigInput,
  type TestGateway,
} from '../support/gateway.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { RawServiceStream, json, processUnary, rawClient, startOkService, type RawClient } from '../support/raw-gate-client.js';

function usageSuite(kind: string, storeConfig: () => Record<string, unknown>) {
  describe(`usage per account (${kind} store)`, () => {
    let gw: TestGateway;
    let echo: ModelService;
    let client: RawClient;
    let raw: RawServiceStream;

    beforeAll(async () => {
      const input = testConfigInput({
        store: storeConfig(),
        plugins: { enabled: ['chatapi', 'usage', 'async-predict'], options: { usage: { flushIntervalMs: 100 } } },
      });
      input.services[0].family = 'openai';
      gw = await startTestGateway(input);
      echo = startEchoService({ gateways: gw.grpcAddress, connectionToken: ECHO_TOKEN, logger: silentLogger });
      await echo.ready();
      client = rawClient(gw.grpcAddress);
      raw = startOkService(client, PRIVATE_TOKEN, 'usage-raw');
      await eventually(() => gw.gateway.gate.hasInstances(11));
    });
    afterAll(async () => {
      raw?.close();
      await echo?.stop();
      client?.close();
      await gw?.close();
    });

    const usage = async (key = TEST_KEY, account = 'demo', query = '') => {
      const res = await fetch(`${gw.httpUrl}/api/platformgateway/account/${account}/usage${query}`, {
        headers: { 'PLATFORM-API-KEY': key },
      });
      return { status: res.status, body: (await res.json()) as any };
    };

    it('sums requests, tokens and charges by service and day; a repeated idempotency key counts once', async () => {
      let input = 0;
      let output = 0;
      for (const content of ['one', 'one two', 'one two three']) {
        const res = await fetch(`${gw.httpUrl}/api/adapters/chatapi/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content }] }),
        });
        const body = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
        input += body.usage.prompt_tokens;
        output += body.usage.completion_tokens;
      }
      const answer = await processUnary(client, {
        account: 'demo',
        model: 'private',
        authToken: TEST_KEY,
        predict: { data: json({ q: 1 }) },
      });
      expect(answer.error).toBeFalsy();
      const charge = (idempotencyKey: string, amount: number) =>
        raw.send({
          requestId: 0,
          deferredBillingCharges: { charges: [{ idempotencyKey, amount, currency: 'USD' }], params: { callerAccountId: 1 } },
        });
      charge('charge-1', 5);
      charge('charge-1', 5); // the same charge again: booked once
      charge('charge-2', 3);
      // A charge for another (known) account does not show in demo's usage.
      raw.send({
        requestId: 0,
        deferredBillingCharges: { charges: [{ idempotencyKey: 'charge-3', amount: 11, currency: 'USD' }], params: { callerAccountId: 2 } },
      });

      const today = new Date().toISOString().slice(0, 10);
      await eventually(async () => (await usage()).body.totals?.charges === 2, 5000, 'charges booked');
      const { status, body } = await usage();
      expect(status).toBe(200);
      expect(body.account).toBe('demo');
      expect(body.to).toBe(today);
      expect(body.days).toEqual([
        { day: today, service: 'demo/echo', requests: 3, inputTokens: input, outputTokens: output, charges: 0, amounts: {} },
        { day: today, service: 'demo/private', requests: 1, inputTokens: 0, outputTokens: 0, charges: 2, amounts: { USD: 8 } },
      ]);
      expect(body.totals).toEqual({ requests: 4, inputTokens: input, outputTokens: output, charges: 2, amounts: { USD: 8 } });

      // Charge-1 once more, later: still once.
      charge('charge-1', 5);
      await new Promise((r) => setTimeout(r, 300));
      expect((await usage()).body.totals.charges).toBe(2);
      // The other account sees its own charge only.
      await eventually(
        async () => (await usage(OTHER_ACCOUNT_KEY, 'other')).body.totals?.amounts?.USD === 11,
        5000,
        'other account charge',
      );
      expect((await usage(OTHER_ACCOUNT_KEY, 'other')).body.totals.requests).toBe(0);
    });

    it('counts an async task as one request of its service, once, whether or not it has run yet', async () => {
      const echoRequests = async () =>
        ((await usage()).body.days as { service: string; requests: number }[]).find((d) => d.service === 'demo/echo')?.requests ?? 0;
      const before = await echoRequests();
      const created = await fetch(`${gw.httpUrl}/api/platformgateway/account/demo/model/echo/async/predict-with-config`, {
        method: 'POST',
        headers: { 'PLATFORM-API-KEY': TEST_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ data: { messages: [{ role: 'user', content: 'async' }] } }),
      });
      expect(created.status).toBe(200);
      const taskId = (await created.json()) as string;
      const state = async () =>
        (
          (await (
            await fetch(`${gw.httpUrl}/api/platformgateway/account/demo/async/task/${taskId}`, {
              headers: { 'PLATFORM-API-KEY': TEST_KEY },
            })
          ).json()) as { status: string }
        ).status;
      await eventually(async () => (await state()) === 'COMPLETED', 5000, 'the task completed');
      await eventually(async () => (await echoRequests()) === before + 1, 5000, 'the task counted');
      // The worker's call to the service later is not a second request.
      await new Promise((r) => setTimeout(r, 300));
      expect(await echoRequests()).toBe(before + 1);
      // A task refused at creation (no such model) is not counted.
      const refused = await fetch(`${gw.httpUrl}/api/platformgateway/account/demo/model/nothing/async/predict-with-config`, {
        method: 'POST',
        headers: { 'PLATFORM-API-KEY': TEST_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ data: {} }),
      });
      expect({ status: refused.status, code: ((await refused.json()) as { error: { code: string } }).error.code }).toEqual({
        status: 400,
        code: 'SERVICE_NOT_FOUND',
      });
      await new Promise((r) => setTimeout(r, 300));
      expect((await usage()).body.totals.requests).toBe(
        ((await usage()).body.days as { requests: number }[]).reduce((n, d) => n + d.requests, 0),
      );
      expect(await echoRequests()).toBe(before + 1);
    });

    it('answers only an account about itself, with a READ_DATA key and a sane period', async () => {
      // Issue 25: another account's usage was 400 "Account 'demo' does not exist" for an account that
      // exists. Now 403, the same for an account that exists and one that does not (no enumeration).
      for (const account of ['demo', '1', 'nobody']) {
        const other = await usage(OTHER_ACCOUNT_KEY, account);
        expect(other.status).toBe(403);
        expect(other.body.error).toMatchObject({
          code: 'ACCESS_TO_ANOTHER_ACCOUNT_DENIED',
          message: `Access to account '${account}' is denied`,
        });
      }
      expect((await usage(READ_ONLY_KEY)).status).toBe(200);
      expect((await usage('')).status).toBe(401);
      expect((await usage(TEST_KEY, 'demo', '?from=2026-13-01')).body.error).toMatchObject({ code: 'VALIDATION_FAILED', param: 'from' });
      expect((await usage(TEST_KEY, 'demo', '?from=2026-02-01&to=2026-01-01')).status).toBe(400);
      expect((await usage(TEST_KEY, 'demo', '?from=2020-01-01&to=2020-01-31')).body).toMatchObject({ days: [], totals: { requests: 0 } });
    });
  });
}

usageSuite('memory', () => ({ kind: 'memory' }));
usageSuite('embedded', () => ({ kind: 'embedded', dataDir: mkdtempSync(join(tmpdir(), 'gw-usage-')) }));

describe.skipIf(!requirePrerequisite('usage on MongoDB', mongoPrerequisite()))('MongoDB', () => {
  let server: MongoTestServer;
  beforeAll(async () => {
    server = await startMongo();
  });
  afterAll(async () => server?.stop());
  usageSuite('mongodb', () => ({ kind: 'mongodb', mongodbUri: server.freshDatabaseUri() }));
});
