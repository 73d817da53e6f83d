/**
 * The fitting store on the three homes of the store port: the conformance suite on each, plus the
 * shared stores' own promises (MongoDB, and the embedded file opened twice): two processes share the
 * rules, and a SUCCESS whose service switch was lost is repaired.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryDocStore } from '../../core/storage/memory-docs.js';
import { MongoDocStore } from '../../core/storage/mongo-docs.js';
import { SqliteDocStore } from '../../core/storage/sqlite-docs.js';
import { connectionDb, openMongoConnection } from '../../core/tasks/mongo-connection.js';
import { DocFittingStore } from '../../plugins/fitting/store/doc-fitting-store.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { fittingStoreConformance, newJob } from './fitting-store.conformance.js';

fittingStoreConformance('memory', async ({ now }) => {
  const docs = new MemoryDocStore();
  const store = await DocFittingStore.open({ docs, now });
  return { store, close: () => docs.close() };
});

/** A store on its own handle to a shared home; `close()` drops that handle, `drop()` the data. */
type SharedStore = DocFittingStore & { close(): Promise<void>; drop(): Promise<void> };
type OpenShared = (where: string, now?: () => number) => Promise<SharedStore>;

const openEmbedded: OpenShared = async (dir, now) => {
  const docs = new SqliteDocStore(dir);
  return Object.assign(await DocFittingStore.open({ docs, now }), {
    close: () => docs.close(),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  });
};

const openMongo: OpenShared = async (uri, now) => {
  const connection = await openMongoConnection(uri);
  const store = await DocFittingStore.open({ docs: new MongoDocStore(connection), now });
  return Object.assign(store, { close: () => connection.close(), drop: async () => void (await connectionDb(connection).dropDatabase()) });
};

fittingStoreConformance('embedded', async ({ now }) => {
  const store = await openEmbedded(mkdtempSync(join(tmpdir(), 'gw-fitting-')), now);
  return {
    store,
    async close() {
      await store.drop();
      await store.close();
    },
  };
});
sharedStoreSuite('embedded', () => mkdtempSync(join(tmpdir(), 'gw-fitting-')), openEmbedded);

describe.skipIf(!requirePrerequisite('MongoDB fitting store', mongoPrerequisite()))('MongoDB fitting store', () => {
  let server: MongoTestServer;
  beforeAll(async () => {
    server = await startMongo();
  });
  afterAll(async () => {
    await server?.stop();
  });

  fittingStoreConformance('mongodb', async ({ now }) => {
    const store = await openMongo(server.freshDatabaseUri(), now);
    return {
      store,
      async close() {
        await store.drop();
        await store.close();
      },
    };
  });
  sharedStoreSuite('mongodb', () => server.freshDatabaseUri(), openMongo);
});

function sharedStoreSuite(home: string, where: () => string, openStore: OpenShared): void {
  describe(`the fitting store shared on ${home}`, () => {
    it('two processes on one database share the name and active-job rules and the ID sequences', async () => {
      const uri = where();
      const [a, b] = await Promise.all([openStore(uri), openStore(uri)]);
      try {
        const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).nextId('derived')));
        expect(new Set(ids).size).toBe(10);
        // Job IDs are numbers from their own sequence, unique across gateways too.
        const jobIds = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).nextId('job')));
        expect(jobIds.slice().sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        const names = await Promise.allSettled(
          [a, b].map((s, i) => s.createDerived({ id: 200 + i, accountId: 1, name: 'same', description: '', baseServiceId: 20 })),
        );
        expect(names.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        await a.createDerived({ id: 300, accountId: 1, name: 'other', description: '', baseServiceId: 20 });
        const jobs = await Promise.allSettled(
          [a, b].map((s, i) => s.createJob(newJob({ jobId: 1000 + i, serviceId: 300, runnerId: `r${i}` }))),
        );
        expect(jobs.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      } finally {
        await a.drop();
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('applies a SUCCESS whose service switch a crash interrupted', async () => {
      const store = await openStore(where());
      try {
        await store.createDerived({ id: 100, accountId: 1, name: 'm', description: '', baseServiceId: 20 });
        await store.createJob(newJob({ jobId: 1, modelDir: '/m/1' }));
        // What a crash right after the job's own update leaves behind.
        await store.jobs.updateMany(
          { _id: 1 },
          { $set: { status: 'SUCCESS', percentage: 100, completedAt: Date.now(), applied: false }, $unset: ['activeServiceId'] },
        );
        expect(await store.getDerived(100)).toMatchObject({ modelDir: null });
        const switched = await store.applyPendingResults();
        expect(switched.map((s) => s.modelDir)).toEqual(['/m/1']);
        expect(await store.getJob(1)).toMatchObject({ applied: true });
        expect(await store.applyPendingResults()).toEqual([]);
      } finally {
        await store.drop();
        await store.close();
      }
    });
  });
}
