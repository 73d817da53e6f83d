/**
 * The store's one retention loop: every store that removes old records (async tasks past their
 * retention, usage days, …) registers a sweep here instead of running a timer of its own. One timer
 * ticks at the shortest interval asked for; each sweep runs when its own interval is due, one after
 * the other (never two at once against the store), and a failing sweep is logged and tried again at
 * its next turn.
 */
import type { Logger } from '../observe/logger.js';
import { every } from '../flow/timers.js';

interface Sweep {
  name: string;
  intervalMs: number;
  run: () => Promise<number | void>;
  dueAt: number;
}

export class Sweeper {
  readonly #sweeps = new Set<Sweep>();
  #stopTimer: (() => void) | undefined;
  #tickMs = Infinity;

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Runs `run` now and every `intervalMs`; the number it resolves with is logged as records removed. */
  add(name: string, intervalMs: number, run: () => Promise<number | void>): () => void {
    const sweep: Sweep = { name, intervalMs, run, dueAt: 0 };
    this.#sweeps.add(sweep);
    this.#retime();
    void this.#tick();
    return () => {
      this.#sweeps.delete(sweep);
      this.#retime();
    };
  }

  stop(): void {
    this.#sweeps.clear();
    this.#retime();
  }

  #retime(): void {
    const tickMs = Math.min(...[...this.#sweeps].map((s) => s.intervalMs));
    if (tickMs === this.#tickMs) return;
    this.#stopTimer?.();
    this.#stopTimer = undefined;
    this.#tickMs = tickMs;
    if (Number.isFinite(tickMs)) this.#stopTimer = every(tickMs, () => this.#tick());
  }

  #running: Promise<void> | undefined;

  #tick(): Promise<void> {
    this.#running ??= this.#runDue().finally(() => (this.#running = undefined));
    return this.#running;
  }

  async #runDue(): Promise<void> {
    for (const sweep of [...this.#sweeps]) {
      const now = this.now();
      if (now < sweep.dueAt || !this.#sweeps.has(sweep)) continue;
      sweep.dueAt = now + sweep.intervalMs;
      try {
        const removed = await sweep.run();
        if (typeof removed === 'number' && removed > 0) this.logger.info({ sweep: sweep.name, removed }, 'store: expired records removed');
      } catch (err) {
        this.logger.warn({ err, sweep: sweep.name }, 'store: sweep failed; will retry');
      }
    }
  }
}
