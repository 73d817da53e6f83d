/**
 * The gateway's persistence, opened once by the core from `config.store` on one of the store port's
 * three homes (port.ts): embedded (the default: SQLite under `store.dataDir`, kept across restarts and
 * crashes, shared by the workers of one host), MongoDB (one connection every store shares, for several
 * hosts) or memory (gone at exit). The core keeps the async task store; plugins that keep state open
 * theirs through `open`, written once on the port (`docs`), so the choice of home and its lifecycle
 * stay here.
 */
import type { Connection } from 'mongoose';
import type { GatewayConfig } from '../config/types.js';
import { BootError } from '../errors.js';
import type { Logger } from '../observe/logger.js';
import { DocTaskStore } from '../tasks/doc-task-store.js';
import { DAY_MS, type TaskStore } from '../tasks/task-store.js';
import { MemoryDocStore } from './memory-docs.js';
import type { DocStore, StoreHome } from './port.js';
import { migrate } from './schema.js';
import { Sweeper } from './sweeper.js';
import { SqliteDocStore } from './sqlite-docs.js';

export type StorageKind = StoreHome;

/**
 * How a plugin's store is made. `docs`: written once on the store port, used on every home. The
 * per-backend pair is for stores not yet moved onto the port: `mongodb` on MongoDB, `memory` elsewhere.
 */
export interface StoreChoices<T> {
  docs?(store: DocStore): T | Promise<T>;
  memory?(): T | Promise<T>;
  /** On the gateway's connection, which the store must not close (the core closes it last). */
  mongodb?(connection: Connection): T | Promise<T>;
}

export interface Storage {
  readonly kind: StorageKind;
  /** The store port on this storage's home. */
  readonly docs: DocStore;
  /** The async tasks and their results. */
  readonly tasks: TaskStore;
  /** Registers a retention sweep on the store's one sweeper loop (sweeper.ts); returns its stop. */
  sweep(name: string, intervalMs: number, run: () => Promise<number | void>): () => void;
  /** A plugin's own store on this storage (e.g. fitting: datasets, derived services, jobs). */
  open<T>(choices: StoreChoices<T>): Promise<T>;
  /** Closes the home (and its connection); plugins close their stores before. */
  close(): Promise<void>;
}

export interface OpenStorageOptions {
  /** The clock (tests). */
  now?: () => number;
}

async function openHome(config: GatewayConfig['store'], logger: Logger): Promise<{ docs: DocStore; connection?: Connection }> {
  if (config.kind === 'memory') {
    logger.info('storage: in memory (tasks, datasets and jobs do not survive a restart)');
    return { docs: new MemoryDocStore() };
  }
  if (config.kind === 'embedded') {
    let docs: SqliteDocStore;
    try {
      docs = new SqliteDocStore(config.dataDir);
    } catch (err) {
      throw new BootError('STORE_UNREACHABLE', `cannot open the embedded store in ${config.dataDir}: ${(err as Error).message}`, [], err);
    }
    logger.info({ file: docs.path }, 'storage: embedded (SQLite)');
    return { docs };
  }
  if (!config.mongodbUri) {
    throw new BootError('CONFIG_INVALID', 'store.kind is mongodb but store.mongodbUri is not set', [
      'store.mongodbUri: required when store.kind is mongodb',
    ]);
  }
  // The MongoDB home and its driver load only for it (mongo-connection.ts says what they cost).
  const [{ openMongoConnection }, { MongoDocStore }] = await Promise.all([
    import('../tasks/mongo-connection.js'),
    import('./mongo-docs.js'),
  ]);
  const connection = await openMongoConnection(config.mongodbUri, logger);
  logger.info('storage: MongoDB');
  return { docs: new MongoDocStore(connection, logger), connection };
}

export async function openStorage(config: GatewayConfig['store'], logger: Logger, options: OpenStorageOptions = {}): Promise<Storage> {
  const { docs, connection } = await openHome(config, logger);
  const closeHome = async (): Promise<void> => {
    await docs.close();
    await connection?.close();
  };
  let tasks: TaskStore;
  try {
    await migrate(docs, logger);
    tasks = await DocTaskStore.open({ docs, retentionMs: config.resultRetentionDays * DAY_MS, now: options.now });
  } catch (err) {
    await closeHome().catch(() => undefined);
    throw err;
  }
  const sweeper = new Sweeper(logger, options.now);
  return {
    kind: docs.home,
    docs,
    tasks,
    sweep: (name, intervalMs, run) => sweeper.add(name, intervalMs, run),
    async open<T>(choices: StoreChoices<T>): Promise<T> {
      if (choices.docs) return choices.docs(docs);
      if (connection && choices.mongodb) return choices.mongodb(connection);
      if (choices.memory) return choices.memory();
      throw new Error('a plugin store offers no way to open on this storage');
    },
    async close() {
      sweeper.stop();
      await tasks.close();
      await closeHome();
    },
  };
}
