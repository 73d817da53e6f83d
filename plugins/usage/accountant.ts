import { every, type PluginContext, type SpendRow, type SpendStore } from '../../core/plugins/index.js';
import type { UsageOptions } from './options.js';
import { dayOf, type UsageDelta, type UsageStore } from './usage-store.js';

/** Currencies become field names in the store: anything else than a short code is booked as `other`. */
const CURRENCY = /^[A-Za-z0-9_-]{1,16}$/;
/** Model names kept in spend rows are cut to this length (callers choose them). */
const MODEL_CHARS = 200;
/**
 * Distinct spend rows held between two flushes: past it, new models are counted as `(other)`, so
 * callers sending ever-new model names cannot grow the gateway's memory or the store.
 */
const MAX_PENDING_SPEND = 20_000;

/** The key dimension of spend: a stored key's ID, `config:<name>` for a config-file key. */
const keyOf = (keyId: string | undefined, keyName: string | undefined): string => keyId ?? (keyName ? `config:${keyName}` : '');

/**
 * Turns the gateway's events into usage: requests and tokens are summed in memory and flushed to the
 * store every `flushIntervalMs` (one write per account, service and day, not one per request);
 * charges are booked at once, each idempotency key once.
 */
export class Accountant {
  readonly #store: UsageStore;
  readonly #pending = new Map<string, UsageDelta>();
  readonly #spend: SpendStore;
  readonly #pendingSpend = new Map<string, SpendRow>();
  readonly #unsubscribe: (() => void)[] = [];
  readonly #stopFlushing: () => void;
  readonly #ctx: PluginContext<UsageOptions>;
  #flushing: Promise<void> = Promise.resolve();

  constructor(ctx: PluginContext<UsageOptions>, store: UsageStore, spend: SpendStore) {
    this.#ctx = ctx;
    this.#store = store;
    this.#spend = spend;
    const { events, directory } = ctx;
    const accountOf = (name: string | undefined) => (name === undefined ? undefined : directory.findAccount(name)?.id);
    this.#unsubscribe.push(
      events.on('httpRequest', (e) => {
        const accountId = accountOf(e.account);
        if (accountId !== undefined && e.service !== undefined) {
          const at = Date.now();
          this.#delta(accountId, e.service, at).requests += 1;
          this.#spendRow(accountId, e.service, e.model, keyOf(e.keyId, e.keyName), at).requests += 1;
        }
      }),
      events.on('grpcCall', (e) => {
        const accountId = accountOf(e.account);
        if (accountId !== undefined && e.service !== undefined) {
          const at = Date.now();
          this.#delta(accountId, e.service, at).requests += 1;
          this.#spendRow(accountId, e.service, undefined, keyOf(e.keyId, e.keyName), at).requests += 1;
        }
      }),
      events.on('usage', (e) => {
        const delta = this.#delta(e.accountId, e.service, e.at);
        delta.inputTokens += e.inputTokens;
        delta.outputTokens += e.outputTokens;
        const row = this.#spendRow(e.accountId, e.service, e.model, keyOf(e.keyId, e.keyName), e.at);
        row.inputTokens += e.inputTokens;
        row.outputTokens += e.outputTokens;
        if (e.cost !== undefined && e.currency !== undefined) addCost(row, e.currency, e.cost);
      }),
      events.on('billing', (e) => {
        if (e.accountId === undefined) return;
        const currency = e.currency === undefined ? 'units' : CURRENCY.test(e.currency) ? e.currency : 'other';
        addCost(this.#spendRow(e.accountId, e.service, undefined, '', e.at), currency, e.amount);
        this.#store
          .charge({
            accountId: e.accountId,
            service: e.service,
            day: dayOf(e.at),
            amount: e.amount,
            currency,
            idempotencyKey: e.idempotencyKey,
          })
          .catch((err: unknown) => ctx.logger.warn({ err }, 'usage: charge not booked'));
      }),
    );
    this.#stopFlushing = every(ctx.options.flushIntervalMs, () => this.flush());
  }

  #delta(accountId: number, service: string, at: number): UsageDelta {
    const day = dayOf(at);
    const key = `${accountId}\n${service}\n${day}`;
    let delta = this.#pending.get(key);
    if (!delta)
      this.#pending.set(key, (delta = { accountId, service, day, requests: 0, inputTokens: 0, outputTokens: 0, charges: 0, amounts: {} }));
    return delta;
  }

  #spendRow(accountId: number, service: string, model: string | undefined, key: string, at: number): SpendRow {
    const day = dayOf(at);
    let name = (model ?? '').slice(0, MODEL_CHARS);
    let id = `${accountId}\n${day}\n${service}\n${name}\n${key}`;
    if (!this.#pendingSpend.has(id) && this.#pendingSpend.size >= MAX_PENDING_SPEND) {
      name = '(other)';
      id = `${accountId}\n${day}\n${service}\n${name}\n${key}`;
    }
    let row = this.#pendingSpend.get(id);
    if (!row)
      this.#pendingSpend.set(
        id,
        (row = { accountId, day, service, model: name, key, requests: 0, inputTokens: 0, outputTokens: 0, cost: {} }),
      );
    return row;
  }

  /** Writes what was counted since the last flush (flushes run one at a time). */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(async () => {
      await this.#flushSpend();
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

  async #flushSpend(): Promise<void> {
    if (this.#pendingSpend.size === 0) return;
    const rows = [...this.#pendingSpend.values()];
    this.#pendingSpend.clear();
    try {
      await this.#spend.add(rows);
    } catch (err) {
      this.#ctx.logger.warn({ err, rows: rows.length }, 'usage: spend not stored; kept for the next flush');
      for (const r of rows) {
        const into = this.#spendRow(r.accountId, r.service, r.model, r.key, Date.parse(r.day));
        into.requests += r.requests;
        into.inputTokens += r.inputTokens;
        into.outputTokens += r.outputTokens;
        for (const [currency, amount] of Object.entries(r.cost)) addCost(into, currency, amount);
      }
    }
  }

  async close(): Promise<void> {
    for (const off of this.#unsubscribe.splice(0)) off();
    this.#stopFlushing();
    await this.flush();
  }
}

function addCost(row: SpendRow, currency: string, amount: number): void {
  if (!Number.isFinite(amount) || amount === 0) return;
  const code = CURRENCY.test(currency) ? currency : 'other';
  row.cost[code] = (row.cost[code] ?? 0) + amount;
}
