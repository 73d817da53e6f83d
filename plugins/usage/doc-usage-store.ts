/**
 * Usage on the store port, one implementation for every home (embedded, MongoDB, memory). Rows grow by
 * `$inc` upserts keyed by account, service and day, so several gateway processes flush their counts
 * into one row; a charge's idempotency key is a document whose `_id` a second booking cannot insert.
 */
import { isDuplicateKey, type Collection, type CollectionSpec, type DocStore } from '../../core/plugins/index.js';
import type { ChargeEntry, UsageDelta, UsageRow, UsageStore } from './usage-store.js';

interface RowDoc extends UsageRow {
  _id: string;
}

interface KeyDoc {
  _id: string;
  day: string;
}

export const USAGE_ROWS: CollectionSpec = {
  name: 'usage_daily',
  indexes: [
    { name: 'account_day', fields: ['accountId', 'day'] },
    { name: 'day', fields: ['day'] },
  ],
};
export const USAGE_CHARGE_KEYS: CollectionSpec = { name: 'usage_charge_keys', indexes: [{ name: 'day', fields: ['day'] }] };

export class DocUsageStore implements UsageStore {
  private constructor(
    private readonly rows: Collection<RowDoc>,
    private readonly keys: Collection<KeyDoc>,
  ) {}

  static async open(docs: DocStore): Promise<DocUsageStore> {
    return new DocUsageStore(await docs.collection<RowDoc>(USAGE_ROWS), await docs.collection<KeyDoc>(USAGE_CHARGE_KEYS));
  }

  async add(deltas: readonly UsageDelta[]): Promise<void> {
    for (const d of deltas) {
      await this.rows.findOneAndUpdate(
        { _id: rowId(d.accountId, d.service, d.day) },
        {
          $setOnInsert: { accountId: d.accountId, service: d.service, day: d.day },
          $inc: {
            requests: d.requests,
            inputTokens: d.inputTokens,
            outputTokens: d.outputTokens,
            charges: d.charges,
            ...Object.fromEntries(Object.entries(d.amounts).map(([currency, amount]) => [`amounts.${currency}`, amount])),
          },
        },
        { upsert: true },
      );
    }
  }

  async charge(entry: ChargeEntry): Promise<boolean> {
    if (entry.idempotencyKey !== undefined) {
      try {
        // The key's document is the booking's claim: a second insert of it fails on _id.
        await this.keys.insert({ _id: `${entry.accountId}:${entry.idempotencyKey}`, day: entry.day });
      } catch (err) {
        if (isDuplicateKey(err)) return false;
        throw err;
      }
    }
    await this.add([
      {
        accountId: entry.accountId,
        service: entry.service,
        day: entry.day,
        requests: 0,
        inputTokens: 0,
        outputTokens: 0,
        charges: 1,
        amounts: { [entry.currency]: entry.amount },
      },
    ]);
    return true;
  }

  async read(accountId: number, fromDay: string, toDay: string): Promise<UsageRow[]> {
    const docs = await this.rows.find({ accountId, day: { $gte: fromDay, $lte: toDay } });
    return docs
      .map(({ _id, ...row }) => ({ ...row, amounts: row.amounts ?? {} }))
      .sort((a, b) => a.day.localeCompare(b.day) || a.service.localeCompare(b.service));
  }

  async purge(beforeDay: string): Promise<void> {
    await this.rows.deleteMany({ day: { $lt: beforeDay } });
    await this.keys.deleteMany({ day: { $lt: beforeDay } });
  }

  /** Nothing to close: the store port is the gateway's. */
  async close(): Promise<void> {}
}

function rowId(accountId: number, service: string, day: string): string {
  return `${accountId}|${service}|${day}`;
}
