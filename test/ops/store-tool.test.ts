/**
 * `npm run store -- …` as an operator runs it (a real process on a config file): stats of the embedded
 * store, backup while it is open and restore after it was lost, and the move to another store by
 * export and import (into a fresh embedded store, and into MongoDB when one is available), large
 * bodies (blobs) included.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/observe/logger.js';
import type { DocStore } from '../../core/storage/port.js';
import { openStorage } from '../../core/storage/storage.js';
import type { GatewayConfig } from '../../core/config/types.js';
import { input } from '../tasks/task-store.conformance.js';
import { mongoPrerequisite, startMongo } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
const dir = mkdtempSync(join(tmpdir(), 'gw-store-tool-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const BIG = Buffer.alloc(400 * 1024, 9);

function config(name: string, store: Record<string, unknown> = {}): { path: string; store: GatewayConfig['store'] } {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ store: { dataDir: `./${name}-data`, ...store } }));
  return {
    path,
    store: { kind: 'embedded', dataDir: join(dir, `${name}-data`), resultRetentionDays: 7, ...store } as GatewayConfig['store'],
  };
}

function tool(configPath: string, ...args: string[]): { code: number | null; out: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_CONFIG: configPath, INIT_CWD: dir };
  delete env.MONGODB_URI;
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'core/bin/store.ts', ...args], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: run.status, out: `${run.stdout}${run.stderr}` };
}

async function seed(store: GatewayConfig['store']): Promise<{ small: string; big: string }> {
  const storage = await openStorage(store, silentLogger());
  const small = (await storage.tasks.create(input(4, '{"a":1}'), { maxQueuedPerAccount: 10 })).taskId;
  const big = (await storage.tasks.create(input(4, BIG), { maxQueuedPerAccount: 10 })).taskId;
  await storage.close();
  return { small, big };
}

async function expectTasks(store: GatewayConfig['store'], ids: { small: string; big: string }): Promise<void> {
  const storage = await openStorage(store, silentLogger());
  try {
    expect((await storage.tasks.getRequestBody(ids.small))?.toString()).toBe('{"a":1}');
    expect((await storage.tasks.getRequestBody(ids.big))?.equals(BIG)).toBe(true);
    expect(await storage.tasks.countQueued(4)).toBe(2);
  } finally {
    await storage.close();
  }
}

async function withDocs(store: GatewayConfig['store'], use: (docs: DocStore) => Promise<unknown>): Promise<void> {
  const storage = await openStorage(store, silentLogger());
  try {
    await use(storage.docs);
  } finally {
    await storage.close();
  }
}

describe('npm run store', () => {
  it('says how to use it when a command or its file is missing', () => {
    const { path } = config('usage');
    const run = tool(path, 'backup');
    expect(run.code).toBe(2);
    expect(run.out).toContain('usage: npm run store -- stats | backup <file>');
  });

  it('prints documents, bytes and the oldest record per collection', async () => {
    const c = config('stats');
    await seed(c.store);
    const run = tool(c.path, 'stats');
    expect(run.code, run.out).toBe(0);
    const tasksLine = run.out.split('\n').find((l) => l.startsWith('tasks '));
    expect(tasksLine).toMatch(/^tasks\s+2\s+\d+\s+\d{4}-\d\d-\d\dT/);
    expect(run.out).toMatch(/\(blobs\)\s+1\s+409600/);
  });

  it('backs the embedded store up while it is open, and restores it after the data is lost', async () => {
    const c = config('backup');
    const ids = await seed(c.store);
    const open = await openStorage(c.store, silentLogger()); // a running gateway's handle
    const backup = join(dir, 'backup.sqlite');
    const run = tool(c.path, 'backup', 'backup.sqlite');
    await open.close();
    expect(run.code, run.out).toBe(0);
    rmSync(c.store.dataDir, { recursive: true, force: true });
    const restored = tool(c.path, 'restore', backup);
    expect(restored.code, restored.out).toBe(0);
    await expectTasks(c.store, ids);
  });

  it('refuses to restore a file that is not a backup', () => {
    const c = config('bad');
    writeFileSync(join(dir, 'not-a-backup'), 'hello');
    const run = tool(c.path, 'restore', 'not-a-backup');
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/store: .*(not a backup|file is not a database)/);
  });

  it('moves the store by export and import into a fresh embedded store', async () => {
    const from = config('from');
    const ids = await seed(from.store);
    // Caller data shaped like the export's encoding of a Buffer ({"$b64": …}) comes across as it was.
    const note = { _id: 'n1', data: { $b64: 'AAE=' }, kept: { $lit: { a: 1 } }, bytes: Buffer.from([1, 2]) };
    await withDocs(from.store, async (docs) => (await docs.collection({ name: 'notes', indexes: [] })).insert(note));
    const exported = tool(from.path, 'export', 'move.jsonl');
    expect(exported.code, exported.out).toBe(0);
    expect(exported.out).toMatch(/exported \d+ documents and 1 blobs/);
    const to = config('to');
    const imported = tool(to.path, 'import', 'move.jsonl');
    expect(imported.code, imported.out).toBe(0);
    await expectTasks(to.store, ids);
    await withDocs(to.store, async (docs) => expect(await (await docs.collection({ name: 'notes', indexes: [] })).get('n1')).toEqual(note));
    // Again: nothing doubles.
    expect(tool(to.path, 'import', 'move.jsonl').out).toMatch(/imported 0 documents .*already there/);
    await expectTasks(to.store, ids);
  });

  it.skipIf(!requirePrerequisite('store import into MongoDB', mongoPrerequisite()))('moves the embedded store into MongoDB', async () => {
    const mongo = await startMongo();
    try {
      const from = config('tomongo');
      const ids = await seed(from.store);
      expect(tool(from.path, 'export', 'mongo.jsonl').code).toBe(0);
      const to = config('mongo', { kind: 'mongodb', mongodbUri: mongo.freshDatabaseUri() });
      const imported = tool(to.path, 'import', 'mongo.jsonl');
      expect(imported.code, imported.out).toBe(0);
      expect(imported.out).toContain('into the mongodb store');
      await expectTasks(to.store, ids);
    } finally {
      await mongo.stop();
    }
  });
});
