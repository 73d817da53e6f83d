import type { Collection, CollectionSpec, DocStore } from '../storage/port.js';

/**
 * Spend per account, UTC day, service, model and key (`us_spend`): written by the usage plugin from the
 * gateway's events (summed in memory, one `$inc` upsert per row and flush), read by the user-space API
 * (`GET /api/platformcore/account/{account}/usage`). Several gateways add into one row.
 */
export interface SpendRow {
  accountId: number;
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  /** `<account>/<service>` as usage names it. */
  service: string;
  /** The model the caller named (chat adapters); '' when none. */
  model: string;
  /** A stored key's ID (`key_…`), `config:<name>` for a config-file key, '' when no key is known (billing charges). */
  key: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  /** Cost per currency: token prices and the services' deferred billing charges. */
  cost: Record<string, number>;
}

interface SpendDoc extends SpendRow {
  _id: string;
}

export const US_SPEND: CollectionSpec = {
  name: 'us_spend',
  indexes: [
    { name: 'account_day', fields: ['accountId', 'day'] },
    { name: 'day', fields: ['day'] },
  ],
};

/** Rows one read returns at most (an account's days × services × models × keys). */
export const MAX_SPEND_ROWS = 100_000;

export class SpendStore {
  readonly #rows: Collection<SpendDoc>;

  private constructor(rows: Collection<SpendDoc>) {
    this.#rows = rows;
  }

  static async open(docs: DocStore): Promise<SpendStore> {
    return new SpendStore(await docs.collection<SpendDoc>(US_SPEND));
  }

  /** Adds counts to their rows (created on first use). */
  async add(rows: readonly SpendRow[]): Promise<void> {
    for (const r of rows) {
      await this.#rows.findOneAndUpdate(
        { _id: spendRowId(r) },
        {
          $setOnInsert: { accountId: r.accountId, day: r.day, service: r.service, model: r.model, key: r.key },
          $inc: {
            requests: r.requests,
            inputTokens: r.inputTokens,
            outputTokens: r.outputTokens,
            ...Object.fromEntries(Object.entries(r.cost).map(([currency, amount]) => [`cost.${currency}`, amount])),
          },
        },
        { upsert: true },
      );
    }
  }

  /** The account's rows from `fromDay` to `toDay` (inclusive). */
  async read(accountId: number, fromDay: string, toDay: string): Promise<SpendRow[]> {
    const docs = await this.#rows.find({ accountId, day: { $gte: fromDay, $lte: toDay } }, { limit: MAX_SPEND_ROWS });
    return docs.map(({ _id, ...row }) => ({ ...row, cost: row.cost ?? {} }));
  }

  /** Removes rows of days before `beforeDay`. */
  async purge(beforeDay: string): Promise<void> {
    await this.#rows.deleteMany({ day: { $lt: beforeDay } });
  }
}

/** The row's key: every dimension, `|`-separated (service and model may hold `/`; none holds `|`... escaped anyway). */
export function spendRowId(r: Pick<SpendRow, 'accountId' | 'day' | 'service' | 'model' | 'key'>): string {
  return [r.accountId, r.day, r.service, r.model, r.key]
    .map((part) => String(part).replaceAll('%', '%25').replaceAll('|', '%7C'))
    .join('|');
}

/** Dimensions a usage read may group by. */
export const SPEND_DIMENSIONS = ['day', 'model', 'key', 'service'] as const;
export type SpendDimension = (typeof SPEND_DIMENSIONS)[number];

/** One row of a grouped read: the dimensions asked for, and the sums. */
export interface SpendGroup {
  day?: string;
  model?: string;
  key?: string;
  service?: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cost: number;
  currency: string | null;
}

/**
 * Sums rows by the dimensions asked for, one group per currency (a group whose rows cost nothing has
 * `cost: 0, currency: null`). Groups come sorted by their dimensions.
 */
export function groupSpend(rows: readonly SpendRow[], by: readonly SpendDimension[]): SpendGroup[] {
  const groups = new Map<
    string,
    {
      dims: Partial<Record<SpendDimension, string>>;
      requests: number;
      inputTokens: number;
      outputTokens: number;
      cost: Record<string, number>;
    }
  >();
  for (const row of rows) {
    const dims: Partial<Record<SpendDimension, string>> = {};
    for (const d of by) dims[d] = row[d];
    const id = JSON.stringify(by.map((d) => row[d]));
    let group = groups.get(id);
    if (!group) groups.set(id, (group = { dims, requests: 0, inputTokens: 0, outputTokens: 0, cost: {} }));
    group.requests += row.requests;
    group.inputTokens += row.inputTokens;
    group.outputTokens += row.outputTokens;
    for (const [currency, amount] of Object.entries(row.cost)) group.cost[currency] = (group.cost[currency] ?? 0) + amount;
  }
  const out: SpendGroup[] = [];
  for (const g of groups.values()) {
    const currencies = Object.entries(g.cost);
    const sums = { requests: g.requests, inputTokens: g.inputTokens, outputTokens: g.outputTokens };
    if (currencies.length === 0) out.push({ ...g.dims, ...sums, cost: 0, currency: null });
    // Requests and tokens are counted once, on the group's first currency.
    currencies.forEach(([currency, cost], i) =>
      out.push({ ...g.dims, ...(i === 0 ? sums : { requests: 0, inputTokens: 0, outputTokens: 0 }), cost: roundMoney(cost), currency }),
    );
  }
  return out.sort((a, b) => by.map((d) => (a[d] ?? '').localeCompare(b[d] ?? '')).find((c) => c !== 0) ?? 0);
}

/** Sums of float prices drift in the last digits: 9 decimals are kept. */
const roundMoney = (n: number): number => Math.round(n * 1e9) / 1e9;
