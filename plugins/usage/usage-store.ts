/** One account's figures for one service on one day (UTC). */
export interface UsageRow {
  accountId: number;
  service: string;
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  charges: number;
  /** Sum of the charges' amounts per currency (`units` when a charge names none). */
  amounts: Record<string, number>;
}

/** Additions to one row (what happened since the last flush). */
export type UsageDelta = Omit<UsageRow, 'amounts'> & { amounts: Record<string, number> };

/** A charge to book once: its idempotency key is remembered (per account) for the retention. */
export interface ChargeEntry {
  accountId: number;
  service: string;
  day: string;
  amount: number;
  currency: string;
  idempotencyKey?: string;
}

/**
 * Where usage is kept (doc-usage-store.ts, on the store port: shared by every gateway on the store). Rows are added to (never
 * replaced), so several gateways can flush their counts into one row.
 */
export interface UsageStore {
  add(deltas: readonly UsageDelta[]): Promise<void>;
  /** Books a charge unless one with its idempotency key was booked before; false when it was. */
  charge(entry: ChargeEntry): Promise<boolean>;
  /** The account's rows from `fromDay` to `toDay` (inclusive), by day then service. */
  read(accountId: number, fromDay: string, toDay: string): Promise<UsageRow[]>;
  /** Removes rows and idempotency keys of days before `beforeDay`. */
  purge(beforeDay: string): Promise<void>;
  close(): Promise<void>;
}

export const dayOf = (epochMs: number): string => new Date(epochMs).toISOString().slice(0, 10);
