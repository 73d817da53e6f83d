/** The async-predict plugin on the in-memory task store (large payloads as files in a data directory). */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MemoryTaskStore } from '../../core/tasks/memory-task-store.js';
import type { TestGateway } from '../support/gateway.js';
import { asyncPredictSuite } from './async-predict.suite.js';

const filesOf = (gw: TestGateway) => {
  const store = gw.gateway.store;
  if (!(store instanceof MemoryTaskStore)) throw new Error('not the memory store');
  return store.files;
};

const sizes = async (gw: TestGateway): Promise<Array<{ path: string; size: number }>> => {
  const files = filesOf(gw);
  return Promise.all((await files.list()).map(async (name) => {
    const path = join(files.dir, name);
    return { path, size: (await stat(path)).size };
  }));
};

asyncPredictSuite('memory', {
  storeConfig: () => ({ kind: 'memory' }),
  shared: false,
  fileSizes: async (gw) => (await sizes(gw)).map((f) => f.size),
  async corruptFileOfSize(gw, size) {
    const file = (await sizes(gw)).find((f) => f.size === size);
    if (!file) throw new Error(`no stored file of ${size} bytes`);
    const data = await readFile(file.path);
    data[0] = (data[0] ?? 0) ^ 0xff;
    await writeFile(file.path, data);
  },
});
