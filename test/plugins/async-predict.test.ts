/**
 * The async-predict plugin on the memory and embedded homes of the store port (large payloads in the
 * home's blobs: a map in memory, a table in the embedded SQLite file).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryDocStore } from '../../core/storage/memory-docs.js';
import { SqliteDocStore } from '../../core/storage/sqlite-docs.js';
import { TASK_FILES_BUCKET } from '../../core/tasks/doc-task-store.js';
import type { TestGateway } from '../support/gateway.js';
import { asyncPredictSuite } from './async-predict.suite.js';

const memoryBlobs = (gw: TestGateway) => {
  const docs = gw.gateway.storage.docs;
  if (!(docs instanceof MemoryDocStore)) throw new Error('not the memory store');
  return docs.blobs(TASK_FILES_BUCKET).blobs;
};

asyncPredictSuite('memory', {
  storeConfig: () => ({ kind: 'memory' }),
  shared: false,
  fileSizes: async (gw) => [...memoryBlobs(gw).values()].map((b) => b.data.length),
  async corruptFileOfSize(gw, size) {
    const blob = [...memoryBlobs(gw).values()].find((b) => b.data.length === size);
    if (!blob) throw new Error(`no stored file of ${size} bytes`);
    blob.data[0] = (blob.data[0] ?? 0) ^ 0xff;
  },
});

const embeddedBlobs = (gw: TestGateway) => {
  const docs = gw.gateway.storage.docs;
  if (!(docs instanceof SqliteDocStore)) throw new Error('not the embedded store');
  return docs.blobs(TASK_FILES_BUCKET);
};
const embeddedFiles = async (gw: TestGateway) => {
  const blobs = embeddedBlobs(gw);
  const out: Array<{ ref: string; data: Buffer }> = [];
  for (const { ref } of await blobs.listBefore(Number.MAX_SAFE_INTEGER, 10_000)) {
    const read = await blobs.read(ref);
    if (read.kind === 'ok') out.push({ ref, data: read.data });
  }
  return out;
};

asyncPredictSuite('embedded', {
  // A database of its own per gateway: the suite counts the files each one keeps.
  storeConfig: () => ({ kind: 'embedded', dataDir: mkdtempSync(join(tmpdir(), 'gw-async-')) }),
  shared: true,
  fileSizes: async (gw) => (await embeddedFiles(gw)).map((f) => f.data.length),
  async corruptFileOfSize(gw, size) {
    const file = (await embeddedFiles(gw)).find((f) => f.data.length === size);
    if (!file) throw new Error(`no stored file of ${size} bytes`);
    file.data[0] = (file.data[0] ?? 0) ^ 0xff;
    embeddedBlobs(gw).overwrite(file.ref, file.data);
  },
});
