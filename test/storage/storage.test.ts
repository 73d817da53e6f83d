import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BootError } from '../../core/errors.js';
import { silentLogger } from '../../core/observe/logger.js';
import { openStorage } from '../../core/storage/storage.js';
import { MemoryDocStore } from '../../core/storage/memory-docs.js';
import { MongoDocStore } from '../../core/storage/mongo-docs.js';
import { SqliteDocStore } from '../../core/storage/sqlite-docs.js';
import { DocTaskStore } from '../../core/tasks/doc-task-store.js';
import { Sweeper } from '../../core/storage/sweeper.js';
import { demoGatewayLoads } from '../support/demo-modules.js';
import { startTestGateway, testConfigInput } from '../support/gateway.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { input } from '../tasks/task-store.conformance.js';

const logger = silentLogger();
let dataDir: string;
const MONGODB_DRIVER = ['mongoose', 'mongodb', 'bson'];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'gw-store-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('openStorage', () => {
  it('keeps everything in memory by default kind, and opens plugin stores with their memory choice', async () => {
    const storage = await openStorage({ kind: 'memory', dataDir, resultRetentionDays: 7 }, logger);
    expect(storage.kind).toBe('memory');
    expect(storage.tasks).toBeInstanceOf(DocTaskStore);
    expect(storage.docs).toBeInstanceOf(MemoryDocStore);
    expect(await storage.open({ memory: () => 'in memory', mongodb: () => 'on MongoDB' })).toBe('in memory');
    expect(await storage.open({ docs: (docs) => docs.home, memory: () => 'in memory' })).toBe('memory');
    await storage.close();
  });

  it('keeps tasks in the embedded store under dataDir, there again after a reopen', async () => {
    const dir = join(dataDir, 'embedded');
    const first = await openStorage({ kind: 'embedded', dataDir: dir, resultRetentionDays: 7 }, logger);
    expect(first.kind).toBe('embedded');
    expect(first.docs).toBeInstanceOf(SqliteDocStore);
    const { taskId } = await first.tasks.create(input(5, Buffer.alloc(300 * 1024, 7)), { maxQueuedPerAccount: 1 });
    await first.close();
    const second = await openStorage({ kind: 'embedded', dataDir: dir, resultRetentionDays: 7 }, logger);
    expect((await second.tasks.get(taskId))?.callerId).toBe(5);
    expect((await second.tasks.getRequestBody(taskId))?.equals(Buffer.alloc(300 * 1024, 7))).toBe(true);
    await second.close();
  });

  it('a gateway on the embedded store loads no MongoDB driver (0.3 s of start-up, 34 MB of RSS and 10 MB of heap)', async () => {
    expect(await demoGatewayLoads({ store: { kind: 'embedded', dataDir: join(dataDir, 'no-driver') } }, MONGODB_DRIVER)).toBe(0);
  }, 60_000);

  it('refuses kind mongodb without a URI, naming the config path', async () => {
    const err: unknown = await openStorage({ kind: 'mongodb', dataDir, resultRetentionDays: 7 }, logger).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BootError);
    expect(err).toMatchObject({ code: 'CONFIG_INVALID', problems: [expect.stringContaining('store.mongodbUri')] });
  });

  it('applies resultRetentionDays to purgeExpired', async () => {
    const clock = 1_000_000_000_000;
    const storage = await openStorage({ kind: 'memory', dataDir, resultRetentionDays: 2 }, logger, { now: () => clock });
    const store = storage.tasks;
    const { taskId } = await store.create(input(), { maxQueuedPerAccount: 1 });
    await store.cancel(taskId);
    expect(await store.purgeExpired(clock + 2 * 86_400_000)).toBe(0);
    expect(await store.purgeExpired(clock + 2 * 86_400_000 + 1)).toBe(1);
    await storage.close();
  });
});

describe('the sweeper, the one retention loop', () => {
  it('purges at once and on every interval until stopped, surviving failures', async () => {
    let calls = 0;
    const purgeExpired = async () => {
      calls++;
      if (calls === 1) throw new Error('db down');
      return 3;
    };
    const stop = new Sweeper(logger).add('tasks', 5, purgeExpired);
    await expect.poll(() => calls).toBeGreaterThanOrEqual(3);
    stop();
    const after = calls;
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBe(after);
  });
  it("runs each store's sweep at its own interval on one loop, one sweep at a time", async () => {
    const sweeper = new Sweeper(logger);
    let running = 0;
    let overlapped = false;
    const counts = { fast: 0, slow: 0 };
    const sweep = (name: 'fast' | 'slow') => async () => {
      overlapped ||= running > 0;
      running++;
      await new Promise((r) => setTimeout(r, 2));
      counts[name]++;
      running--;
    };
    sweeper.add('slow', 60_000, sweep('slow'));
    sweeper.add('fast', 5, sweep('fast'));
    await expect.poll(() => counts.fast).toBeGreaterThanOrEqual(4);
    sweeper.stop();
    expect(counts.slow).toBe(1);
    expect(overlapped).toBe(false);
  });
});

describe.skipIf(!requirePrerequisite('openStorage (MongoDB)', mongoPrerequisite()))('openStorage with MongoDB', () => {
  let server: MongoTestServer;
  beforeAll(async () => {
    server = await startMongo();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('connects to store.mongodbUri once, hands that connection to plugin stores and closes it last', async () => {
    const storage = await openStorage({ kind: 'mongodb', mongodbUri: server.uri, dataDir, resultRetentionDays: 7 }, logger);
    expect(storage.kind).toBe('mongodb');
    expect(storage.docs).toBeInstanceOf(MongoDocStore);
    const { taskId } = await storage.tasks.create(input(4), { maxQueuedPerAccount: 1 });
    expect((await storage.tasks.get(taskId))?.callerId).toBe(4);
    const connection = await storage.open({ memory: () => undefined, mongodb: (c) => c });
    expect(connection).toBe((storage.docs as MongoDocStore).connection);
    await storage.close();
    expect(connection?.readyState).toBe(0);
  });

  it('a gateway on MongoDB loads the driver (the check above sees it)', async () => {
    expect(await demoGatewayLoads({ store: { kind: 'mongodb', mongodbUri: server.freshDatabaseUri() } }, MONGODB_DRIVER)).toBeGreaterThan(
      0,
    );
  }, 60_000);

  it('a gateway with fitting on MongoDB opens one connection, shared by the task and fitting stores', async () => {
    // Counted among the connections made since, so that one an earlier test is still closing does not count.
    const earlier = new Set(mongoose.connections);
    const opened = () => mongoose.connections.filter((c) => !earlier.has(c) && c.readyState === 1).length;
    const gw = await startTestGateway(
      testConfigInput({
        store: { kind: 'mongodb', mongodbUri: server.freshDatabaseUri(), dataDir },
        plugins: { enabled: ['async-predict', 'fitting'] },
      }),
    );
    try {
      expect(opened()).toBe(1);
      // The fitting store works on it: its collections live in the gateway's database.
      const names = async () =>
        (await (gw.gateway.storage.docs as MongoDocStore).connection.db!.listCollections().toArray()).map((c) => c.name);
      await expect.poll(names).toContain('fittingCounters');
    } finally {
      await gw.close();
    }
    expect(opened()).toBe(0);
  });
});
