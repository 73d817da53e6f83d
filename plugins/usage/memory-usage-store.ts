import { addInto, emptyRow, type ChargeEntry, type UsageDelta, type UsageRow, type UsageStore } from './usage-store.js';

/** Usage in this process (lost at restart). */
export class MemoryUsageStore implements UsageStore {
  readonly #rows = new Map<string, UsageRow>();
  /** Booked idempotency keys, `<account>:<key>` → day. */
  readonly #keys = new Map<string, string>();

  #row(accountId: number, service: string, day: string): UsageRow {
    const key = `${accountId}\n${service}\n${day}`;
    let row = this.#rows.get(key);
    if (!row) this.#rows.set(key, (row = emptyRow(accountId, service, day)));
    return row;
  }

  async add(deltas: readonly UsageDelta[]): Promise<void> {
    for (const delta of deltas) addInto(this.#row(delta.accountId, delta.service, delta.day), delta);
  }

  async charge(entry: ChargeEntry): Promise<boolean> {
    if (entry.idempotencyKey !== undefined) {
      const key = `${entry.accountId}:${entry.idempotencyKey}`;
      if (this.#keys.has(key)) return false;
      this.#keys.set(key, entry.day);
    }
    const row = this.#row(entry.accountId, entry.service, entry.day);
    row.charges += 1;
    row.amounts[entry.currency] = (row.amounts[entry.currency] ?? 0) + entry.amount;
    return true;
  }

  async read(accountId: number, fromDay: string, toDay: string): Promise<UsageRow[]> {
    return [...this.#rows.values()]
      .filter((r) => r.accountId === accountId && r.day >= fromDay && r.day <= toDay)
      .map((r) => structuredClone(r))
      .sort((a, b) => a.day.localeCompare(b.day) || a.service.localeCompare(b.service));
  }

  async purge(beforeDay: string): Promise<void> {
    for (const [key, row] of this.#rows) if (row.day < beforeDay) this.#rows.delete(key);
    for (const [key, day] of this.#keys) if (day < beforeDay) this.#keys.delete(key);
  }

  async close(): Promise<void> {}
}
