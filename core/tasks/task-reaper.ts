import type { Logger } from '../logger.js';
import { every } from '../timers.js';
import type { TaskStore } from './task-store.js';

/**
 * Calls `purgeExpired` every `intervalMs` (and once at start); failures are logged, never thrown.
 * Returns a stop function. Whoever owns the store's lifecycle (the async plugin) starts it.
 */
export function startTaskReaper(store: TaskStore, logger: Logger, intervalMs = 60 * 60 * 1000): () => void {
  const run = async (): Promise<void> => {
    const removed = await store.purgeExpired();
    if (removed > 0) logger.info({ removed }, 'expired tasks removed');
  };
  return every(intervalMs, run, { now: true, onError: (err) => logger.warn({ err }, 'task reaper failed; will retry') });
}
