import { every, type PluginContext } from '../../core/plugins/index.js';
import type { UsageOptions } from './options.js';
import { dayOf, type UsageDelta, type UsageStore } from './usage-store.js';

/** Currencies become field names in the store: anything else than a short code is booked as `other`. */
const CURRENCY = /^[A-Za-z0-9_-]{1,16}$/;

/**
 * Turns the gateway's events into usage: requests and tokens are summed in memory and flushed to the
 * store every `flushIntervalMs` (one write per account, service and day, not one per request);
 * charges are booked at once, each idempotency key once.
 */
export class Accountant {
  readonly #store: UsageStore;
  readonly #pending = new Map<string, UsageDelta>();
  readonly #unsubscribe: (() => void)[] = [];
  readonly #stopFlushing: () => void;
  readonly #ctx: PluginContext<UsageOptions>;
  #flushing: Promise<void> = Promise.resolve();

  constructor(ctx: PluginContext<UsageOptions>, store: UsageStore) {
    this.#ctx = ctx;
    this.#store = store;
    const { events, directory } = ctx;
    const accountOf = (name: string | undefined) => (name === undefined ? undefined : directory.findAccount(name)?.id);
    this.#unsubscribe.push(
      events.on('httpRequest', (e) => {
        const accountId = accountOf(e.account);
        if (accountId !== undefined && e.service !== undefined) this.#delta(accountId, e.service, Date.now()).requests += 1;
      }),
      events.on('grpcCall', (e) => {
        const accountId = accountOf(e.account);
        if (accountId !== undefined && e.service !== undefined) this.#delta(accountId, e.service, Date.now()).requests += 1;
      }),
      events.on('usage', (e) => {
        const delta = this.#delta(e.accountId, e.service, e.at);
        delta.inputTokens += e.inputTokens;
        delta.outputTokens += e.outputTokens;
      }),
      events.on('billing', (e) => {
        if (e.accountId === undefined) return;
        const currency = e.currency === undefined ? 'units' : CURRENCY.test(e.currency) ? e.currency : 'other';
        this.#store.charge({ accountId: e.accountId, service: e.service, day: dayOf(e.at), amount: e.amount, currency, idempotencyKey: e.idempotencyKey })
          .catch((err: unknown) => ctx.logger.warn({ err }, 'usage: charge not booked'));
      }),
    );
    this.#stopFlushing = every(ctx.options.flushIntervalMs, () => this.flush());
  }

  #delta(accountId: number, service: string, at: number): UsageDelta {
    const day = dayOf(at);
    const key = `${accountId}\n${service}\n${day}`;
    let delta = this.#pending.get(key);
    if (!delta) this.#pending.set(key, (delta = { accountId, service, day, requests: 0, inputTokens: 0, outputTokens: 0, charges: 0, amounts: {} }));
    return delta;
  }

  /** Writes what was counted since the last flush (flushes run one at a time). */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(async () => {
      if (this.#pending.size === 0) return;
      const deltas = [...this.#pending.values()];
      this.#pending.clear();
      try {
        await this.#store.add(deltas);
      } catch (err) {
        this.#ctx.logger.warn({ err, rows: deltas.length }, 'usage: counts not stored; kept for the next flush');
        for (const d of deltas) {
          const into = this.#delta(d.accountId, d.service, Date.parse(d.day));
          into.requests += d.requests;
          into.inputTokens += d.inputTokens;
          into.outputTokens += d.outputTokens;
        }
      }
    });
    return this.#flushing;
  }

  async close(): Promise<void> {
    for (const off of this.#unsubscribe.splice(0)) off();
    this.#stopFlushing();
    await this.flush();
  }
}
