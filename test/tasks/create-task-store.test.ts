import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BootError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import { createTaskStore, startTaskReaper } from '../../core/tasks/create-task-store.js';
import { MemoryTaskStore } from '../../core/tasks/memory-task-store.js';
import { MongoTaskStore } from '../../core/tasks/mongo-task-store.js';
import type { TaskStore } from '../../core/tasks/task-store.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { input } from './task-store.conformance.js';

const logger = silentLogger();
let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'gw-store-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('createTaskStore', () => {
  it('builds the memory store by default kind', async () => {
    const store = await createTaskStore({ kind: 'memory', dataDir, resultRetentionDays: 7 }, logger);
    expect(store).toBeInstanceOf(MemoryTaskStore);
    await store.close();
  });

  it('refuses kind mongodb without a URI, naming the config path', async () => {
    const err: unknown = await createTaskStore({ kind: 'mongodb', dataDir, resultRetentionDays: 7 }, logger).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BootError);
    expect(err).toMatchObject({ code: 'CONFIG_INVALID', problems: [expect.stringContaining('store.mongodbUri')] });
  });

  it('applies resultRetentionDays to purgeExpired', async () => {
    const clock = 1_000_000_000_000;
    const store = await createTaskStore({ kind: 'memory', dataDir, resultRetentionDays: 2 }, logger, { now: () => clock });
    const { taskId } = await store.create(input(), { maxQueuedPerAccount: 1 });
    await store.cancel(taskId);
    expect(await store.purgeExpired(clock + 2 * 86_400_000)).toBe(0);
    expect(await store.purgeExpired(clock + 2 * 86_400_000 + 1)).toBe(1);
    await store.close();
  });
});

describe('startTaskReaper', () => {
  it('purges at once and on every interval until stopped, surviving failures', async () => {
    let calls = 0;
    const store = { purgeExpired: async () => { calls++; if (calls === 1) throw new Error('db down'); return 3; } } as unknown as TaskStore;
    const stop = startTaskReaper(store, logger, 5);
    await expect.poll(() => calls).toBeGreaterThanOrEqual(3);
    stop();
    const after = calls;
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBe(after);
  });
});

describe.skipIf(!requirePrerequisite('createTaskStore (MongoDB)', mongoPrerequisite()))('createTaskStore with MongoDB', () => {
  let server: MongoTestServer;
  beforeAll(async () => {
    server = await startMongo();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('connects to store.mongodbUri and closes its connection with the store', async () => {
    const store = await createTaskStore({ kind: 'mongodb', mongodbUri: server.uri, dataDir, resultRetentionDays: 7 }, logger);
    expect(store).toBeInstanceOf(MongoTaskStore);
    const { taskId } = await store.create(input(4), { maxQueuedPerAccount: 1 });
    expect((await store.get(taskId))?.callerId).toBe(4);
    await store.close();
    expect((store as MongoTaskStore).model.db.readyState).toBe(0);
  });
});
