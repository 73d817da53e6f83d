/**
 * The fitting store's two implementations: the conformance suite for each, plus the MongoDB store's
 * own promises: two processes share the rules, and a SUCCESS whose service switch was lost is repaired.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMongoConnection } from '../../core/tasks/mongo-connection.js';
import { MemoryFittingStore } from '../../plugins/fitting/store/memory-fitting-store.js';
import { MongoFittingStore } from '../../plugins/fitting/store/mongo-fitting-store.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { fittingStoreConformance, newJob } from './fitting-store.conformance.js';

fittingStoreConformance('memory', async ({ now }) => {
  const store = new MemoryFittingStore({ now });
  return { store, close: () => store.close() };
});

async function openStore(uri: string, now?: () => number): Promise<MongoFittingStore> {
  return MongoFittingStore.open({ connection: await openMongoConnection(uri), ownsConnection: true, now });
}

describe.skipIf(!requirePrerequisite('MongoDB fitting store', mongoPrerequisite()))('MongoDB fitting store', () => {
  let server: MongoTestServer;
  beforeAll(async () => {
    server = await startMongo();
  });
  afterAll(async () => {
    await server?.stop();
  });

  fittingStoreConformance('mongodb', async ({ now }) => {
    const store = await openStore(server.freshDatabaseUri(), now);
    return {
      store,
      async close() {
        await store.models.jobs.db.dropDatabase();
        await store.close();
      },
    };
  });

  it('two processes on one database share the name and active-job rules and the ID sequences', async () => {
    const uri = server.freshDatabaseUri();
    const [a, b] = await Promise.all([openStore(uri), openStore(uri)]);
    try {
      const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).nextId('derived')));
      expect(new Set(ids).size).toBe(10);
      // Job IDs are numbers from their own sequence, unique across gateways too.
      const jobIds = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).nextId('job')));
      expect(jobIds.slice().sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      const names = await Promise.allSettled([a, b].map((s, i) => s.createDerived({ id: 200 + i, accountId: 1, name: 'same', description: '', baseServiceId: 20 })));
      expect(names.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      await a.createDerived({ id: 300, accountId: 1, name: 'other', description: '', baseServiceId: 20 });
      const jobs = await Promise.allSettled([a, b].map((s, i) => s.createJob(newJob({ jobId: 1000 + i, serviceId: 300, runnerId: `r${i}` }))));
      expect(jobs.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    } finally {
      await a.models.jobs.db.dropDatabase();
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('applies a SUCCESS whose service switch a crash interrupted', async () => {
    const store = await openStore(server.freshDatabaseUri());
    try {
      await store.createDerived({ id: 100, accountId: 1, name: 'm', description: '', baseServiceId: 20 });
      await store.createJob(newJob({ jobId: 1, modelDir: '/m/1' }));
      // What a crash right after the job's own update leaves behind.
      await store.models.jobs.updateOne({ _id: 1 }, { $set: { status: 'SUCCESS', percentage: 100, completedAt: Date.now(), applied: false }, $unset: { activeServiceId: 1 } });
      expect(await store.getDerived(100)).toMatchObject({ modelDir: null });
      const switched = await store.applyPendingResults();
      expect(switched.map((s) => s.modelDir)).toEqual(['/m/1']);
      expect(await store.getJob(1)).toMatchObject({ applied: true });
      expect(await store.applyPendingResults()).toEqual([]);
    } finally {
      await store.models.jobs.db.dropDatabase();
      await store.close();
    }
  });
});
