import type { Connection } from 'mongoose';
import { isDuplicateKeyError } from '../../core/plugins/index.js';
import type { ChargeEntry, UsageDelta, UsageRow, UsageStore } from './usage-store.js';

const ROWS = 'usage_daily';
const KEYS = 'usage_charge_keys';

interface RowDoc extends Omit<UsageRow, 'amounts'> {
  _id: string;
  amounts: Record<string, number>;
}

/** Usage in MongoDB, shared by every gateway on the database: rows grow by `$inc` upserts. */
export class MongoUsageStore implements UsageStore {
  readonly #connection: Connection;

  /** On the gateway's connection, which the core closes. */
  constructor(connection: Connection) {
    this.#connection = connection;
  }

  get #rows() {
    return this.#connection.db!.collection<RowDoc>(ROWS);
  }

  get #keys() {
    return this.#connection.db!.collection<{ _id: string; day: string }>(KEYS);
  }

  async add(deltas: readonly UsageDelta[]): Promise<void> {
    if (deltas.length === 0) return;
    await this.#rows.bulkWrite(deltas.map((d) => ({
      updateOne: {
        filter: { _id: rowId(d.accountId, d.service, d.day) },
        update: {
          $setOnInsert: { accountId: d.accountId, service: d.service, day: d.day },
          $inc: {
            requests: d.requests, inputTokens: d.inputTokens, outputTokens: d.outputTokens, charges: d.charges,
            ...Object.fromEntries(Object.entries(d.amounts).map(([currency, amount]) => [`amounts.${currency}`, amount])),
          },
        },
        upsert: true,
      },
    })), { ordered: false });
  }

  async charge(entry: ChargeEntry): Promise<boolean> {
    if (entry.idempotencyKey !== undefined) {
      try {
        // The key's document is the booking's claim: a second insert of it fails on _id.
        await this.#keys.insertOne({ _id: `${entry.accountId}:${entry.idempotencyKey}`, day: entry.day });
      } catch (err) {
        if (isDuplicateKeyError(err)) return false;
        throw err;
      }
    }
    await this.add([{ accountId: entry.accountId, service: entry.service, day: entry.day, requests: 0, inputTokens: 0, outputTokens: 0, charges: 1, amounts: { [entry.currency]: entry.amount } }]);
    return true;
  }

  async read(accountId: number, fromDay: string, toDay: string): Promise<UsageRow[]> {
    const docs = await this.#rows.find({ accountId, day: { $gte: fromDay, $lte: toDay } }).toArray();
    return docs
      .map(({ _id, ...row }) => ({ ...row, amounts: row.amounts ?? {} }))
      .sort((a, b) => a.day.localeCompare(b.day) || a.service.localeCompare(b.service));
  }

  async purge(beforeDay: string): Promise<void> {
    await this.#rows.deleteMany({ day: { $lt: beforeDay } });
    await this.#keys.deleteMany({ day: { $lt: beforeDay } });
  }

  /** Nothing to close: the connection is the gateway's. */
  async close(): Promise<void> {}
}

function rowId(accountId: number, service: string, day: string): string {
  return `${accountId}|${service}|${day}`;
}
