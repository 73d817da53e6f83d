/** Chooses the task store from `config.store`, and runs the reaper that expires old tasks. */
import { BootError } from '../errors.js';
import type { GatewayConfig } from '../config/types.js';
import type { Logger } from '../logger.js';
import { MemoryTaskStore } from './memory-task-store.js';
import { openMongoConnection } from './mongo-connection.js';
import { MongoTaskStore } from './mongo-task-store.js';
import { DAY_MS, type TaskStore } from './task-store.js';

export interface CreateTaskStoreOptions {
  /** The clock (tests). */
  now?: () => number;
}

export async function createTaskStore(
  config: GatewayConfig['store'],
  logger: Logger,
  options: CreateTaskStoreOptions = {},
): Promise<TaskStore> {
  const retentionMs = config.resultRetentionDays * DAY_MS;
  if (config.kind === 'memory') {
    logger.info({ dataDir: config.dataDir }, 'task store: in memory (tasks do not survive a restart)');
    return new MemoryTaskStore({ retentionMs, dataDir: config.dataDir, now: options.now });
  }
  if (!config.mongodbUri) {
    throw new BootError('CONFIG_INVALID', 'store.kind is mongodb but store.mongodbUri is not set', ['store.mongodbUri: required when store.kind is mongodb']);
  }
  const connection = await openMongoConnection(config.mongodbUri, logger);
  try {
    const store = await MongoTaskStore.open({ connection, ownsConnection: true, retentionMs, now: options.now, logger });
    logger.info('task store: MongoDB');
    return store;
  } catch (err) {
    await connection.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Calls `purgeExpired` every `intervalMs` (and once at start); failures are logged, never thrown.
 * Returns a stop function. Whoever owns the store's lifecycle (the async plugin) starts it.
 */
export function startTaskReaper(store: TaskStore, logger: Logger, intervalMs = 60 * 60 * 1000): () => void {
  let running = false;
  const run = async (): Promise<void> => {
    if (running) return;
    running = true;
    try {
      const removed = await store.purgeExpired();
      if (removed > 0) logger.info({ removed }, 'expired tasks removed');
    } catch (err) {
      logger.warn({ err }, 'task reaper failed; will retry');
    } finally {
      running = false;
    }
  };
  void run();
  const timer = setInterval(() => void run(), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
