/**
 * Schema versions and migrations at boot: a fresh store records the current version; data of the
 * previous version (MongoDB written by the gateway before the store port) is upgraded and read; a
 * store of a newer version is refused with STORE_SCHEMA_NEWER; steps run once, in order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BootError } from '../../core/errors.js';
import { silentLogger } from '../../core/observe/logger.js';
import { SqliteDocStore } from '../../core/storage/sqlite-docs.js';
import { META, SCHEMA_VERSION, migrate, type Migration } from '../../core/storage/schema.js';
import { openStorage } from '../../core/storage/storage.js';
import { connectionDb, openMongoConnection } from '../../core/tasks/mongo-connection.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';

const logger = silentLogger();
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-schema-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('schema versions on the embedded store', () => {
  it('records the current version in a fresh store', async () => {
    const dataDir = tempDir();
    const storage = await openStorage({ kind: 'embedded', dataDir, resultRetentionDays: 7 }, logger);
    const meta = await storage.docs.collection<{ _id: string; version: number }>(META);
    expect((await meta.get('schema'))?.version).toBe(SCHEMA_VERSION);
    await storage.close();
  });

  it('refuses a store written by a newer gateway, with a coded boot error, and leaves it as it was', async () => {
    const dataDir = tempDir();
    const docs = new SqliteDocStore(dataDir);
    await (await docs.collection<{ _id: string; version: number }>(META)).insert({ _id: 'schema', version: SCHEMA_VERSION + 1 });
    await docs.close();
    const err = await openStorage({ kind: 'embedded', dataDir, resultRetentionDays: 7 }, logger).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BootError);
    expect(err).toMatchObject({ code: 'STORE_SCHEMA_NEWER' });
    expect((err as Error).message).toContain(`schema version ${SCHEMA_VERSION + 1}`);
    const again = new SqliteDocStore(dataDir);
    expect((await (await again.collection<{ _id: string; version: number }>(META)).get('schema'))?.version).toBe(SCHEMA_VERSION + 1);
    await again.close();
  });

  it('runs each later step once, in order, and records the version after each', async () => {
    const docs = new SqliteDocStore(tempDir());
    await migrate(docs); // fresh: the current version
    const ran: number[] = [];
    const step = (to: number): Migration => ({
      to,
      description: `step ${to}`,
      async run(d) {
        ran.push(to);
        const things = await d.collection<{ _id: string; v: number }>({ name: 'things', indexes: [] });
        await things.findOneAndUpdate({ _id: 'x' }, { $set: { v: to } }, { upsert: true });
      },
    });
    const steps = [step(SCHEMA_VERSION + 2), step(SCHEMA_VERSION + 1)];
    expect(await migrate(docs, logger, steps, SCHEMA_VERSION + 2)).toBe(SCHEMA_VERSION);
    expect(ran).toEqual([SCHEMA_VERSION + 1, SCHEMA_VERSION + 2]);
    expect(await migrate(docs, logger, steps, SCHEMA_VERSION + 2)).toBe(SCHEMA_VERSION + 2);
    expect(ran).toHaveLength(2);
    expect((await (await docs.collection<{ _id: string; v: number }>({ name: 'things', indexes: [] })).get('x'))?.v).toBe(
      SCHEMA_VERSION + 2,
    );
    await docs.close();
  });
});

describe.skipIf(!requirePrerequisite('schema migration (MongoDB)', mongoPrerequisite()))('schema migration on MongoDB', () => {
  let server: MongoTestServer;
  beforeAll(async () => {
    server = await startMongo();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('upgrades data written by the previous version (no version, TTL fields) and serves its tasks', async () => {
    const uri = server.freshDatabaseUri();
    // What the gateway before the store port wrote: a completed task with its TTL backstop field.
    const raw = await openMongoConnection(uri);
    const tasks = connectionDb(raw).collection('tasks');
    const taskId = '00000000-0000-4000-8000-000000000001';
    await tasks.insertOne({
      _id: taskId as never,
      callerId: 3,
      serviceId: 10,
      serviceAccountId: 2,
      status: 'COMPLETED',
      createdAt: 1_000,
      completedAt: 2_000,
      expireAt: new Date(2_000 + 8 * 86_400_000),
      request: {
        kind: 'raw',
        body: { size: 2, sha256: '44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a', inline: Buffer.from('{}') },
      },
      leaseToken: null,
      leaseUntil: null,
      workerId: 'w',
      attempt: 1,
      result: {
        statusCode: 200,
        headers: [{ name: 'content-type', value: 'application/json' }],
        body: { size: 2, sha256: '44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a', inline: Buffer.from('{}') },
      },
      error: null,
    });
    await raw.close();

    const storage = await openStorage({ kind: 'mongodb', mongodbUri: uri, dataDir: tempDir(), resultRetentionDays: 36500 }, logger);
    try {
      expect(await storage.tasks.get(taskId)).toMatchObject({
        status: 'COMPLETED',
        callerId: 3,
        result: { statusCode: 200, headers: { 'content-type': 'application/json' } },
      });
      expect(await storage.tasks.getResult(taskId)).toMatchObject({ kind: 'result', body: Buffer.from('{}') });
      const stored = await (await storage.docs.collection<{ _id: string; expireAt?: unknown }>({ name: 'tasks', indexes: [] })).get(taskId);
      expect(stored).not.toHaveProperty('expireAt');
      expect((await (await storage.docs.collection<{ _id: string; version: number }>(META)).get('schema'))?.version).toBe(SCHEMA_VERSION);
    } finally {
      await storage.close();
    }
  });
});
