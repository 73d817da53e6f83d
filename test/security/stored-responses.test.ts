/**
 * Issue 25, stored Responses (`store: true`) attacked by one account of two sharing a gateway, on the
 * memory store and on MongoDB (the MongoDB-wire test server):
 *  - N2: the store was one 10,000-record FIFO for every account: after 10,050 small responses from
 *    bob, alice's response was 404 on GET and as `previous_response_id`. Now each account keeps at
 *    most `responses.maxPerAccount` and past it loses only its own oldest (here 20, so that 25 of bob's
 *    stand for the 10,050).
 *  - N3: stored responses bypassed `limits.storageBytesPerAccount`: an account at 60 of its 64 MiB
 *    stored 35 responses of 15 MiB and the gateway's RSS went from 288 to 1,759 MB. Here the quota is
 *    1 MiB and the sizes are scaled alike (60/64 of it stored, then 35 tries of 15/64 of it each).
 *    Stored responses are also gone after `responses.retentionDays`.
 *  - A `previous_response_id` chain re-sends the whole stored conversation each turn (its cost is the
 *    square of its length): past `responses.maxConversationBytes` a turn is 400 RESPONSE_CHAIN_TOO_LONG.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoService } from '../../examples/echo-service/service.js';
import { silentLogger, type ModelService } from '../../sdk/index.js';
import { CHAT_TOKENS, chatConfigInput } from '../support/chat.js';
import { OTHER_ACCOUNT_KEY, TEST_KEY, eventually, startTestGateway, type TestGateway } from '../support/gateway.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';

const QUOTA = 1024 * 1024;
const MAX_PER_ACCOUNT = 20;
const MAX_CONVERSATION_BYTES = 16 * 1024;
const ALICE = { key: TEST_KEY, id: 1 };
const BOB = { key: OTHER_ACCOUNT_KEY, id: 2 };

interface Answer {
  status: number;
  body: any;
}

interface Running {
  gw: TestGateway;
  echo: ModelService;
}

async function boot(store: Record<string, unknown>, responses: Record<string, unknown>): Promise<Running> {
  const input = chatConfigInput({ chatapi: { responses } });
  input.store = store;
  input.limits = { storageBytesPerAccount: QUOTA };
  const gw = await startTestGateway(input);
  const echo = startEchoService({ gateways: gw.grpcAddress, connectionToken: CHAT_TOKENS.echo, logger: silentLogger });
  await echo.ready();
  return { gw, echo };
}

async function send(gw: TestGateway, method: string, path: string, key: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${gw.httpUrl}/api/adapters/chatapi/v1/${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

const create = (gw: TestGateway, who: { key: string }, input: string, more: Record<string, unknown> = {}) =>
  send(gw, 'POST', 'responses', who.key, { model: 'demo/echo', input, ...more });

function storedResponsesSuite(name: string, store: () => Record<string, unknown>) {
  describe(`stored responses under attack (${name})`, () => {
    let run: Running;
    beforeAll(async () => {
      run = await boot(store(), { maxPerAccount: MAX_PER_ACCOUNT, maxConversationBytes: MAX_CONVERSATION_BYTES });
    }, 60_000);
    afterAll(async () => {
      await run?.echo.stop();
      await run?.gw.close();
    });

    it('N2: one account storing past its bound evicts only its own oldest responses', async () => {
      const { gw } = run;
      const alice = await create(gw, ALICE, 'alice keeps this');
      expect(alice.status).toBe(200);
      const bobs: string[] = [];
      for (let i = 0; i < MAX_PER_ACCOUNT + 5; i++) {
        const bob = await create(gw, BOB, `bob ${i}`);
        expect(bob.status).toBe(200);
        bobs.push(bob.body.id);
      }
      expect((await send(gw, 'GET', `responses/${alice.body.id}`, ALICE.key)).status).toBe(200);
      const next = await create(gw, ALICE, 'and goes on', { previous_response_id: alice.body.id });
      expect(next.status).toBe(200);
      // The echo counts the words of the whole conversation: alice's first turn was continued.
      expect(next.body.usage.input_tokens).toBe(3 + 4 + 3);
      // Bob's own oldest five went, his newest stayed.
      for (const id of bobs.slice(0, 5)) expect((await send(gw, 'GET', `responses/${id}`, BOB.key)).status).toBe(404);
      for (const id of bobs.slice(5)) expect((await send(gw, 'GET', `responses/${id}`, BOB.key)).status).toBe(200);
    });

    it('a previous_response_id chain past maxConversationBytes is refused with a coded 400', async () => {
      const { gw } = run;
      let previous: string | undefined;
      let refused: Answer | undefined;
      for (let turn = 0; turn < 10 && !refused; turn++) {
        const answer = await create(gw, BOB, 'z'.repeat(3 * 1024), previous ? { previous_response_id: previous } : {});
        if (answer.status === 200) previous = answer.body.id;
        else refused = answer;
      }
      expect(refused?.status).toBe(400);
      expect(refused?.body.error).toMatchObject({ code: 'RESPONSE_CHAIN_TOO_LONG', param: 'previous_response_id' });
      // Starting over works.
      expect((await create(gw, BOB, 'a new conversation')).status).toBe(200);
    });

    it('N3: stored responses count against the storage quota; past it nothing is stored', async () => {
      const { gw } = run;
      const pipeline = gw.gateway.pipeline;
      // Alice fills her account to 60 of 64 parts of the quota with stored responses.
      while ((await pipeline.storedBytes(ALICE.id)) < (QUOTA * 60) / 64) {
        const filled = await create(gw, ALICE, 'f'.repeat(16 * 1024));
        expect(filled.status).toBe(200);
      }
      const before = await pipeline.storedBytes(ALICE.id);
      expect(before).toBeLessThanOrEqual(QUOTA + 64 * 1024);
      // Then 35 responses of 15/64 of the quota each: every one refused, none kept.
      for (let i = 0; i < 35; i++) {
        const refused = await create(gw, ALICE, 'x'.repeat((QUOTA * 15) / 64));
        expect(refused.status).toBe(413);
        expect(refused.body.error.code).toBe('STORAGE_QUOTA_EXCEEDED');
      }
      expect(await pipeline.storedBytes(ALICE.id)).toBe(before);
      // Not storing is still served, and the other account stores on.
      expect((await create(gw, ALICE, 'x'.repeat((QUOTA * 15) / 64), { store: false })).status).toBe(200);
      expect((await create(gw, BOB, 'y'.repeat((QUOTA * 15) / 64))).status).toBe(200);
    });
  });

  describe(`stored responses past their retention (${name})`, () => {
    let run: Running;
    beforeAll(async () => {
      run = await boot(store(), { retentionDays: 1 / 86_400 });
    }, 60_000);
    afterAll(async () => {
      await run?.echo.stop();
      await run?.gw.close();
    });

    it('are gone: not readable, not continued, not counted', async () => {
      const { gw } = run;
      const stored = await create(gw, ALICE, 'short lived');
      expect(stored.status).toBe(200);
      expect(await gw.gateway.pipeline.storedBytes(ALICE.id)).toBeGreaterThan(0);
      await eventually(
        async () => (await send(gw, 'GET', `responses/${stored.body.id}`, ALICE.key)).status === 404,
        10_000,
        'the response to expire',
      );
      expect((await create(gw, ALICE, 'more', { previous_response_id: stored.body.id })).status).toBe(404);
      expect(await gw.gateway.pipeline.storedBytes(ALICE.id)).toBe(0);
    });
  });
}

storedResponsesSuite('memory', () => ({ kind: 'memory' }));

describe.skipIf(!requirePrerequisite('stored responses on MongoDB', mongoPrerequisite()))('on MongoDB', () => {
  let mongo: MongoTestServer | undefined;
  beforeAll(async () => {
    mongo = await startMongo();
  }, 60_000);
  afterAll(async () => {
    await mongo?.stop();
  });
  storedResponsesSuite('mongodb', () => ({ kind: 'mongodb', mongodbUri: mongo!.freshDatabaseUri() }));
});
