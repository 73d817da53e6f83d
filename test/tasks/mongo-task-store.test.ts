/**
 * The MongoDB task store against a MongoDB-wire server (MONGODB_URI, else mongo-java-server from
 * .ci/mongo-java-server): the conformance suite, and two stores on two connections, standing for two
 * gateway processes, sharing one database under concurrent claims and creates.
 */
import mongoose from 'mongoose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../core/errors.js';
import { MongoDocStore } from '../../core/storage/mongo-docs.js';
import { DocTaskStore, TASK_FILES_BUCKET } from '../../core/tasks/doc-task-store.js';
import { connectionDb, openMongoConnection } from '../../core/tasks/mongo-connection.js';
import { DAY_MS } from '../../core/tasks/task-store.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { expectNoDoubleClaims, input, taskStoreConformance } from './task-store.conformance.js';

/** The task store on the MongoDB home, on a connection of its own; `close()` closes that connection. */
type MongoTaskStore = DocTaskStore & { mongo: MongoDocStore };
async function openStore(uri: string, now?: () => number, retentionMs = 7 * DAY_MS): Promise<MongoTaskStore> {
  const connection = await openMongoConnection(uri);
  const docs = new MongoDocStore(connection);
  const store = await DocTaskStore.open({ docs, now, retentionMs });
  return Object.assign(store, {
    mongo: docs,
    close: async () => {
      await connection.close();
    },
  });
}

describe.skipIf(!requirePrerequisite('MongoDB task store', mongoPrerequisite()))('MongoDB task store', () => {
  let server: MongoTestServer;
  beforeAll(async () => {
    server = await startMongo();
  });
  afterAll(async () => {
    await server?.stop();
  });

  taskStoreConformance('mongodb', async ({ now, retentionMs }) => {
    const store = await openStore(server.freshDatabaseUri(), now, retentionMs);
    const db = connectionDb(store.mongo.connection);
    const files = db.collection(`${TASK_FILES_BUCKET}.files`);
    const chunks = db.collection(`${TASK_FILES_BUCKET}.chunks`);
    return {
      store,
      listFiles: async () => (await files.find({}).toArray()).map((f) => String(f._id)),
      async corruptFile(ref) {
        const filesId = new mongoose.mongo.ObjectId(ref);
        const chunk = await chunks.findOne({ files_id: filesId, n: 0 });
        const data = Buffer.from((chunk!.data as mongoose.mongo.Binary).buffer);
        data[0] = (data[0] ?? 0) ^ 0xff;
        await chunks.updateOne({ _id: chunk!._id }, { $set: { data: new mongoose.mongo.Binary(data) } });
      },
      async close() {
        await db.dropDatabase();
        await store.close();
      },
    };
  });

  it('sweeps GridFS files whose task never got stored, once past retention and grace', async () => {
    const store = await openStore(server.freshDatabaseUri());
    try {
      const { taskId } = await store.create(input(1, Buffer.alloc(300 * 1024, 5)), { maxQueuedPerAccount: 1 });
      await store.files.put('lost.request', Buffer.alloc(1000, 6), { taskId: 'no-such-task' });
      const files = async () => (await store.files.listBefore(Date.now() + 60_000, 10)).map((f) => ({ ...f, taskId: f.metadata.taskId }));
      expect(await files()).toHaveLength(2);
      await store.purgeExpired(Date.now()); // too young to be called orphans
      expect(await files()).toHaveLength(2);
      await store.purgeExpired(Date.now() + 9 * DAY_MS);
      expect((await files()).map((f) => f.taskId)).toEqual([taskId]);
      expect((await store.getRequestBody(taskId))?.length).toBe(300 * 1024);
    } finally {
      await store.close();
    }
  });

  describe('two gateway processes on one database', () => {
    let a: MongoTaskStore;
    let b: MongoTaskStore;
    afterEach(async () => {
      await a?.close();
      await b?.close();
    });
    const open = async () => {
      const uri = server.freshDatabaseUri();
      [a, b] = await Promise.all([openStore(uri), openStore(uri)]);
    };

    it('never claims a task twice under concurrent claiming', async () => {
      await open();
      await expectNoDoubleClaims(a, b);
    });

    it('holds the running cap across both', async () => {
      await open();
      for (let i = 0; i < 10; i++) await a.create(input(7), { maxQueuedPerAccount: 250 });
      const claimOnce = (store: MongoTaskStore, i: number) => store.claim({ workerId: `w${i}`, leaseMs: 60_000, maxRunningPerAccount: 3 });
      const got = await Promise.all(Array.from({ length: 12 }, (_, i) => claimOnce(i % 2 ? a : b, i)));
      expect(got.filter((t) => t !== null)).toHaveLength(3);
      expect(await a.countRunning(7)).toBe(3);
      expect(await b.countQueued(7)).toBe(7);
    });

    it('holds the idle cap across both', async () => {
      await open();
      const tries = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).create(input(9), { maxQueuedPerAccount: 5 })),
      );
      const refused = tries.flatMap((t) => (t.status === 'rejected' ? [t.reason as unknown] : []));
      expect(tries.filter((t) => t.status === 'fulfilled')).toHaveLength(5);
      expect(refused.every((e) => isGatewayError(e) && e.code === 'TOO_MANY_IDLE_ASYNC_TASKS')).toBe(true);
      expect(await b.countQueued(9)).toBe(5);
    });

    it('lets the other process finish a task whose lease ran out, fencing the first', async () => {
      let clock = 1_700_000_000_000;
      const uri = server.freshDatabaseUri();
      [a, b] = await Promise.all([openStore(uri, () => clock), openStore(uri, () => clock)]);
      const { taskId } = await a.create(input(3), { maxQueuedPerAccount: 5 });
      const first = await a.claim({ workerId: 'a', leaseMs: 1_000, maxRunningPerAccount: 1 });
      clock += 1_001;
      const second = await b.claim({ workerId: 'b', leaseMs: 1_000, maxRunningPerAccount: 1 });
      expect(second).toMatchObject({ taskId, attempt: 2, workerId: 'b' });
      const answer = { statusCode: 200, headers: {}, body: Buffer.from('{}') };
      expect(await a.complete(taskId, first!.leaseToken!, answer)).toBe(false);
      expect(await b.complete(taskId, second!.leaseToken!, answer)).toBe(true);
      expect((await a.get(taskId))?.status).toBe('COMPLETED');
    });
  });
});
