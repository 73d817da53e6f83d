/**
 * The store's schema version, recorded in every home (collection `_meta`, document `schema`), and the
 * migrations that bring older data up to it at boot. A gateway that finds data of a newer version
 * refuses to start (`STORE_SCHEMA_NEWER`) rather than misread it. Migrations run in order, each once:
 * the version is written after each step, and every step is safe to run again (a crash mid-step
 * repeats it at the next boot). Several processes may boot at once: each step is idempotent, and the
 * version only moves forward (a compare-and-set).
 */
import { BootError } from '../errors.js';
import type { Logger } from '../observe/logger.js';
import { isDuplicateKey, type Collection, type CollectionSpec, type DocStore } from './port.js';

/** The schema this gateway reads and writes. */
export const SCHEMA_VERSION = 1;

export const META: CollectionSpec = { name: '_meta', indexes: [] };

interface SchemaDoc {
  _id: 'schema';
  version: number;
  updatedAt: number;
}

export interface Migration {
  /** The version this step produces (it runs on data of version `to - 1`). */
  to: number;
  description: string;
  run(docs: DocStore): Promise<void>;
}

/**
 * Version 0 is the data of gateways before the store port: MongoDB only (the embedded home starts at
 * 1). Its tasks carried `expireAt` for a TTL index, its limit windows and stored responses `expiresAt`;
 * the port's one sweeper removes these records on every home, so the TTL indexes and fields go.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    to: 1,
    description: 'retention by the sweeper on every home: MongoDB TTL fields of tasks, limit windows and stored responses removed',
    async run(docs) {
      if (docs.home !== 'mongodb') return;
      const tasks = await docs.collection<{ _id: string }>({ name: 'tasks', indexes: [] });
      await tasks.updateMany({ expireAt: { $exists: true } }, { $unset: ['expireAt'] });
      const windows = await docs.collection<{ _id: string }>({ name: 'gateway_limit_windows', indexes: [] });
      await windows.updateMany({ expiresAt: { $exists: true } }, { $unset: ['expiresAt'] });
      await docs.dropIndex('tasks', 'expireAt_ttl');
      await docs.dropIndex('gateway_limit_windows', 'expiresAt_1');
      const responses = await docs.collection<{ _id: string }>({ name: 'chatResponses', indexes: [] });
      await responses.updateMany({ expiresAt: { $exists: true } }, { $unset: ['expiresAt'] });
      await docs.dropIndex('chatResponses', 'expiresAt_1');
    },
  },
];

/** Whether the store holds data of any version (a fresh store starts at the current version). */
async function hasData(docs: DocStore): Promise<boolean> {
  return (await docs.stats()).some((c) => c.documents > 0 && c.name !== '_meta');
}

/** Brings the store to `SCHEMA_VERSION`, or refuses a newer one; returns the version found. */
export async function migrate(
  docs: DocStore,
  logger?: Logger,
  migrations: readonly Migration[] = MIGRATIONS,
  target = SCHEMA_VERSION,
): Promise<number> {
  const meta = await docs.collection<SchemaDoc>(META);
  const found = (await meta.get('schema'))?.version ?? ((await hasData(docs)) ? 0 : target);
  if (found > target) {
    throw new BootError('STORE_SCHEMA_NEWER', `the store holds data of schema version ${found}; this gateway reads up to ${target}`, [
      'a newer gateway wrote it: run that version, or restore a backup taken before the upgrade (docs/storage.md)',
    ]);
  }
  let version = found;
  for (const step of migrations.filter((m) => m.to > found && m.to <= target).sort((a, b) => a.to - b.to)) {
    logger?.info({ from: version, to: step.to, step: step.description }, 'store: migrating');
    await step.run(docs);
    version = await advance(meta, step.to);
  }
  if (version < target || !(await meta.get('schema'))) await advance(meta, target);
  return found;
}

/** Moves the recorded version forward to `to` (never back, when another process got further). */
async function advance(meta: Collection<SchemaDoc>, to: number): Promise<number> {
  const moved = await meta.findOneAndUpdate({ _id: 'schema', version: { $lt: to } }, { $set: { version: to, updatedAt: Date.now() } });
  if (moved) return to;
  try {
    await meta.insert({ _id: 'schema', version: to, updatedAt: Date.now() });
    return to;
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    return (await meta.get('schema'))?.version ?? to;
  }
}
