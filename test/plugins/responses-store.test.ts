/**
 * Stored responses: the store behaves alike on the three homes of the store port (memory, embedded,
 * MongoDB: put, get, delete, retention, the per-account bound, bytes), and
 * gateways sharing MongoDB share stored responses, so `previous_response_id` and retrieve work on
 * any of them (judged by the official openai Node SDK).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryDocStore } from '../../core/storage/memory-docs.js';
import { MongoDocStore } from '../../core/storage/mongo-docs.js';
import { SqliteDocStore } from '../../core/storage/sqlite-docs.js';
import { openMongoConnection } from '../../core/tasks/mongo-connection.js';
import { startEchoService } from '../../examples/echo-service/service.js';
import { DocResponseStore, recordBytes, type ResponseStore, type StoredResponse } from '../../plugins/chatapi/responses/store.js';
import { silentLogger } from '../../sdk/index.js';
import { CHAT_TOKENS, chatConfigInput } from '../support/chat.js';
import { startTestGateway, TEST_KEY, type TestGateway } from '../support/gateway.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';

const record = (id: string, createdAt = Date.now(), ownerId = 1): StoredResponse => ({
  id,
  ownerId,
  createdAt,
  response: { id, object: 'response', output: [{ type: 'message', content: [{ type: 'output_text', text: 'héllo' }] }] },
  inputItems: [{ id: 'msg_1', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
  conversation: [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'héllo' },
  ],
});

/** The behaviour both stores share; `retentionMs` is the store's, `age` ages a record past it. */
function conformance(
  name: string,
  open: (retentionMs: number, maxPerAccount?: number) => Promise<ResponseStore>,
  age: (record: StoredResponse, byMs: number) => StoredResponse,
) {
  describe(name, () => {
    it('gives back what was put, and deletes it once', async () => {
      const store = await open(60_000);
      await store.put(record('resp_a'));
      expect(await store.get('resp_a')).toEqual(record('resp_a', (await store.get('resp_a'))!.createdAt));
      expect(await store.get('resp_missing')).toBeNull();
      expect(await store.delete('resp_a')).toBe(true);
      expect(await store.delete('resp_a')).toBe(false);
      expect(await store.get('resp_a')).toBeNull();
      await store.close();
    });

    it('does not give back a record past the retention', async () => {
      const store = await open(60_000);
      await store.put(age(record('resp_old'), 61_000));
      await store.put(record('resp_new'));
      expect(await store.get('resp_old')).toBeNull();
      expect(await store.get('resp_new')).not.toBeNull();
      await store.close();
    });

    it("keeps at most maxPerAccount per account, dropping that account's oldest only (issue 25 N2)", async () => {
      const store = await open(60_000, 2);
      const t = Date.now();
      await store.put(record('resp_alice', t, 1));
      for (let i = 1; i <= 4; i++) await store.put(record(`resp_bob${i}`, t + i, 2));
      expect(await store.get('resp_alice')).not.toBeNull();
      expect(await store.get('resp_bob1')).toBeNull();
      expect(await store.get('resp_bob2')).toBeNull();
      expect(await store.get('resp_bob3')).not.toBeNull();
      expect(await store.get('resp_bob4')).not.toBeNull();
      await store.close();
    });

    it("counts each account's bytes, without expired or deleted records (issue 25 N3)", async () => {
      const store = await open(60_000);
      await store.put(age(record('resp_old', Date.now(), 1), 61_000));
      await store.put(record('resp_a', Date.now(), 1));
      const one = recordBytes(record('resp_a'));
      expect(await store.storedBytes(1)).toBe(one);
      await store.put(record('resp_b', Date.now(), 1));
      await store.put(record('resp_c', Date.now(), 2));
      expect(await store.storedBytes(1)).toBe(2 * one);
      expect(await store.storedBytes(2)).toBe(one);
      await store.delete('resp_a');
      expect(await store.storedBytes(1)).toBe(one);
      expect(await store.storedBytes(3)).toBe(0);
      await store.close();
    });
  });
}

const older = (r: StoredResponse, byMs: number) => ({ ...r, createdAt: r.createdAt - byMs });
conformance(
  'responses on the memory store',
  async (retentionMs, maxPerAccount = 10_000) => DocResponseStore.open(new MemoryDocStore(), { retentionMs, maxPerAccount }),
  older,
);
conformance(
  'responses on the embedded store',
  async (retentionMs, maxPerAccount = 10_000) =>
    DocResponseStore.open(new SqliteDocStore(mkdtempSync(join(tmpdir(), 'responses-store-'))), { retentionMs, maxPerAccount }),
  older,
);

it('the sweeper removes responses past the retention, and only those', async () => {
  const docs = new MemoryDocStore();
  const store = await DocResponseStore.open(docs, { retentionMs: 60_000, maxPerAccount: 10 });
  await store.put(older(record('resp_old'), 61_000));
  await store.put(record('resp_new'));
  expect(await store.purgeExpired()).toBe(1);
  expect((await docs.stats()).find((c) => c.name === 'chatResponses')?.documents).toBe(1);
  expect(await store.get('resp_new')).not.toBeNull();
});

describe.skipIf(!requirePrerequisite('stored responses with MongoDB', mongoPrerequisite()))('stored responses with MongoDB', () => {
  let mongo: MongoTestServer;
  beforeAll(async () => {
    mongo = await startMongo();
  }, 60_000);
  afterAll(async () => {
    await mongo?.stop();
  });

  conformance(
    'responses on MongoDB',
    async (retentionMs, maxPerAccount = 10_000) =>
      DocResponseStore.open(new MongoDocStore(await openMongoConnection(mongo.freshDatabaseUri())), { retentionMs, maxPerAccount }),
    older,
  );

  it('shares stored responses between gateways on one database', async () => {
    const uri = mongo.freshDatabaseUri();
    const dataDir = mkdtempSync(join(tmpdir(), 'responses-store-'));
    const gateways: TestGateway[] = [];
    const boot = async () => {
      const input = chatConfigInput();
      input.store = { kind: 'mongodb', mongodbUri: uri, dataDir };
      const gw = await startTestGateway(input);
      gateways.push(gw);
      return gw;
    };
    const a = await boot();
    const b = await boot();
    const echo = startEchoService({
      gateways: [a.grpcAddress, b.grpcAddress].join(','),
      connectionToken: CHAT_TOKENS.echo,
      logger: silentLogger,
    });
    try {
      await echo.ready();
      const onA = new OpenAI({ apiKey: TEST_KEY, baseURL: `${a.httpUrl}/api/adapters/chatapi/v1`, maxRetries: 0 });
      const onB = new OpenAI({ apiKey: TEST_KEY, baseURL: `${b.httpUrl}/api/adapters/chatapi/v1`, maxRetries: 0 });
      const first = await onA.responses.create({ model: 'demo/echo', input: 'stored in mongo' });
      expect((await onB.responses.retrieve(first.id)).output_text).toBe('Echo: stored in mongo');
      const next = await onB.responses.create({ model: 'demo/echo', input: 'and continued', previous_response_id: first.id });
      // The echo counts the words of the whole conversation: 'stored in mongo', 'Echo: stored in mongo', 'and continued'.
      expect(next.usage?.input_tokens).toBe(3 + 4 + 2);
      await onB.responses.delete(first.id);
      await expect(onA.responses.retrieve(first.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    } finally {
      await echo.stop();
      for (const gw of gateways) await gw.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
