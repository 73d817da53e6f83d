/**
 * The gateway's persistence, opened once by the core from `config.store`: in memory (the default, gone
 * at restart) or on one MongoDB connection that every store shares. The core keeps the async task
 * store; plugins that keep state of their own open it through `open`, giving one implementation per
 * kind, so the choice of memory or MongoDB and the connection's lifecycle stay here.
 */
import type { Connection } from 'mongoose';
import type { GatewayConfig } from '../config/types.js';
import { BootError } from '../errors.js';
import type { Logger } from '../logger.js';
import { MemoryTaskStore } from '../tasks/memory-task-store.js';
import { openMongoConnection } from '../tasks/mongo-connection.js';
import { MongoTaskStore } from '../tasks/mongo-task-store.js';
import { DAY_MS, type TaskStore } from '../tasks/task-store.js';

export type StorageKind = 'memory' | 'mongodb';

/** One implementation of a plugin's store per storage kind. */
export interface StoreChoices<T> {
  memory(): T | Promise<T>;
  /** On the gateway's connection, which the store must not close (the core closes it last). */
  mongodb(connection: Connection): T | Promise<T>;
}

export interface Storage {
  readonly kind: StorageKind;
  /** The async tasks and their results. */
  readonly tasks: TaskStore;
  /** A plugin's own store on this storage (e.g. fitting: datasets, derived services, jobs). */
  open<T>(choices: StoreChoices<T>): Promise<T>;
  /** Closes the task store, then the connection; plugins close their stores before. */
  close(): Promise<void>;
}

export interface OpenStorageOptions {
  /** The clock (tests). */
  now?: () => number;
}

export async function openStorage(config: GatewayConfig['store'], logger: Logger, options: OpenStorageOptions = {}): Promise<Storage> {
  const retentionMs = config.resultRetentionDays * DAY_MS;
  if (config.kind === 'memory') {
    logger.info({ dataDir: config.dataDir }, 'storage: in memory (tasks, datasets and jobs do not survive a restart)');
    const tasks = new MemoryTaskStore({ retentionMs, dataDir: config.dataDir, now: options.now });
    return {
      kind: 'memory',
      tasks,
      open: async (choices) => choices.memory(),
      close: () => tasks.close(),
    };
  }
  if (!config.mongodbUri) {
    throw new BootError('CONFIG_INVALID', 'store.kind is mongodb but store.mongodbUri is not set', ['store.mongodbUri: required when store.kind is mongodb']);
  }
  const connection = await openMongoConnection(config.mongodbUri, logger);
  let tasks: MongoTaskStore;
  try {
    tasks = await MongoTaskStore.open({ connection, retentionMs, now: options.now, logger });
  } catch (err) {
    await connection.close().catch(() => undefined);
    throw err;
  }
  logger.info('storage: MongoDB');
  return {
    kind: 'mongodb',
    tasks,
    open: async (choices) => choices.mongodb(connection),
    async close() {
      await tasks.close();
      await connection.close();
    },
  };
}
