import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryTaskStore } from '../../core/tasks/memory-task-store.js';
import { taskStoreConformance } from './task-store.conformance.js';

taskStoreConformance('memory', async ({ now, retentionMs }) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-tasks-'));
  const store = new MemoryTaskStore({ dataDir, now, retentionMs });
  return {
    store,
    listFiles: () => store.files.list(),
    async corruptFile(ref) {
      const path = join(store.files.dir, ref);
      const data = await readFile(path);
      data[0] = (data[0] ?? 0) ^ 0xff;
      await writeFile(path, data);
    },
    async close() {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
});
