import type { Logger } from '../../observe/logger.js';
import type { RequestLimiter } from './local-rate-limiter.js';
import type { DocStore } from '../../storage/port.js';
import { SharedWindowBudget, limitWindows, type WindowDoc } from '../shared-window-budget.js';

/** The collection of shared limit windows (one small document per account and window). */
export const LIMITS_COLLECTION = 'gateway_limit_windows';

/**
 * The per-account requests-per-second limit across every gateway (or worker) sharing one store: one-second
 * windows of a SharedWindowBudget (docs/operations.md, "Shared limits").
 */
export class SharedRateLimiter implements RequestLimiter {
  readonly #budget: SharedWindowBudget;

  private constructor(budget: SharedWindowBudget) {
    this.#budget = budget;
  }

  static async open(docs: DocStore, logger: Logger): Promise<SharedRateLimiter> {
    const collection = await docs.collection<WindowDoc>(limitWindows(LIMITS_COLLECTION));
    const log = logger.child({ component: 'shared-limits' });
    return new SharedRateLimiter(
      new SharedWindowBudget({ collection, windowMs: 1000, warn: (message, err) => log.warn({ err }, message) }),
    );
  }

  tryTake(id: number | string, ratePerSecond: number): boolean {
    return this.#budget.tryTake(`rps:${id}`, ratePerSecond);
  }

  close(): void {
    this.#budget.close();
  }
}
