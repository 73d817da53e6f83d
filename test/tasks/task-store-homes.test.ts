/**
 * The task store on the memory and embedded homes of the store port: the conformance suite (the
 * MongoDB home runs it in mongo-task-store.test.ts), and on the embedded home two stores on one
 * database file, standing for two worker processes, under concurrent claims and creates.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../core/errors.js';
import { MemoryDocStore } from '../../core/storage/memory-docs.js';
import { SqliteDocStore } from '../../core/storage/sqlite-docs.js';
import { DocTaskStore, TASK_FILES_BUCKET } from '../../core/tasks/doc-task-store.js';
import { DAY_MS } from '../../core/tasks/task-store.js';
import { expectNoDoubleClaims, input, taskStoreConformance } from './task-store.conformance.js';

taskStoreConformance('memory', async ({ now, retentionMs }) => {
  const docs = new MemoryDocStore();
  const store = await DocTaskStore.open({ docs, now, retentionMs });
  const blobs = docs.blobs(TASK_FILES_BUCKET);
  return {
    store,
    listFiles: async () => [...blobs.blobs.keys()],
    async corruptFile(ref) {
      const blob = blobs.blobs.get(ref)!;
      blob.data[0] = (blob.data[0] ?? 0) ^ 0xff;
    },
    close: () => docs.close(),
  };
});

taskStoreConformance('embedded', async ({ now, retentionMs }) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-tasks-'));
  const docs = new SqliteDocStore(dataDir);
  const store = await DocTaskStore.open({ docs, now, retentionMs });
  const blobs = docs.blobs(TASK_FILES_BUCKET);
  return {
    store,
    listFiles: async () => (await blobs.listBefore(Number.MAX_SAFE_INTEGER, 1000)).map((b) => b.ref),
    async corruptFile(ref) {
      const read = await blobs.read(ref);
      if (read.kind !== 'ok') throw new Error(`no blob ${ref}`);
      read.data[0] = (read.data[0] ?? 0) ^ 0xff;
      blobs.overwrite(ref, read.data);
    },
    async close() {
      await docs.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
});

describe('embedded: two processes on one database file', () => {
  let dataDir: string;
  const homes: SqliteDocStore[] = [];
  afterEach(async () => {
    for (const h of homes.splice(0)) await h.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  const open = async (now?: () => number): Promise<[DocTaskStore, DocTaskStore]> => {
    dataDir = await mkdtemp(join(tmpdir(), 'gw-tasks-'));
    const stores = [];
    for (let i = 0; i < 2; i++) {
      const docs = new SqliteDocStore(dataDir);
      homes.push(docs);
      stores.push(await DocTaskStore.open({ docs, now, retentionMs: 7 * DAY_MS }));
    }
    return stores as [DocTaskStore, DocTaskStore];
  };

  it('never claims a task twice under concurrent claiming', async () => {
    const [a, b] = await open();
    await expectNoDoubleClaims(a, b);
  });

  it('holds the running and idle caps across both', async () => {
    const [a, b] = await open();
    for (let i = 0; i < 10; i++) await a.create(input(7), { maxQueuedPerAccount: 250 });
    const got = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).claim({ workerId: `w${i}`, leaseMs: 60_000, maxRunningPerAccount: 3 })),
    );
    expect(got.filter((t) => t !== null)).toHaveLength(3);
    expect(await a.countRunning(7)).toBe(3);
    const tries = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).create(input(9), { maxQueuedPerAccount: 5 })),
    );
    expect(tries.filter((t) => t.status === 'fulfilled')).toHaveLength(5);
    expect(
      tries.every((t) => t.status === 'fulfilled' || (isGatewayError(t.reason) && t.reason.code === 'TOO_MANY_IDLE_ASYNC_TASKS')),
    ).toBe(true);
    expect(await b.countQueued(9)).toBe(5);
  });

  it('lets the other process finish a task whose lease ran out, fencing the first', async () => {
    let clock = 1_700_000_000_000;
    const [a, b] = await open(() => clock);
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
