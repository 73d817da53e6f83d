import type { AccountConfig } from '../config/types.js';
import type { Caller, Directory } from '../admission/directory.js';
import { gatewayError } from '../errors.js';
import { SharedWindowBudget, limitWindows, type WindowDoc } from '../admission/shared-window-budget.js';
import type { Logger } from '../observe/logger.js';
import type { GatewayEvents } from '../observe/events.js';
import type { DocStore } from '../storage/port.js';

export type BudgetUnit = 'tokens' | 'money';
export type BudgetPeriod = 'day' | 'month' | 'total';

/** A spending limit of an account or an API key: tokens or money, per UTC day, UTC month or in total. */
export interface Budget {
  readonly unit: BudgetUnit;
  /** Tokens (input and output together), or money in the prices' currency. */
  readonly limit: number;
  readonly period: BudgetPeriod;
}

/** JSON Schema of a `budgets` list (API bodies; at most one budget per unit and period is meaningful). */
export const BUDGETS_SCHEMA = {
  type: 'array',
  maxItems: 6,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['unit', 'limit', 'period'],
    properties: {
      unit: { enum: ['tokens', 'money'] },
      limit: { type: 'number', minimum: 0, maximum: 1e12 },
      period: { enum: ['day', 'month', 'total'] },
    },
  },
} as const;

/** Money is counted in millionths of the currency unit, so leases are whole units. */
const MICROS = 1_000_000;

/** The collection of budget windows: one small document per budget and period window. */
export const BUDGET_WINDOWS = 'us_budget_windows';

const DAY_MS = 86_400_000;

/** UTC calendar months: the index counts months since 1970. */
function monthOf(now: number): { index: number; start: number } {
  const date = new Date(now);
  const index = date.getUTCFullYear() * 12 + date.getUTCMonth() - 1970 * 12;
  return { index, start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) };
}

/** What one answer cost: tokens, and money in the service's currency (0 when it has no prices). */
export interface Spend {
  tokens: number;
  money: number;
}

/** The budgets a request is checked against and debited to: its account's, then its key's. */
interface Holder {
  readonly label: string;
  readonly id: string;
  readonly budgets: readonly Budget[] | undefined;
}

const accountHolder = (account: AccountConfig): Holder => ({
  label: `account '${account.name}'`,
  id: `a${account.id}`,
  budgets: account.budgets,
});

/**
 * Budgets of accounts and keys across every gateway on one store, decided without a store call on the
 * request path: each period is a SharedWindowBudget (leased slices of the window's limit, one atomic
 * `$inc` per lease). `check` runs before dispatch and refuses when the slice and the lease are gone;
 * `debit` counts the answer's actual tokens and cost after it. Spend past a budget is bounded by the
 * requests each gateway had admitted when its slice ran out (docs/user-space.md, "Budgets").
 */
export class BudgetGate {
  readonly #periods: Record<BudgetPeriod, SharedWindowBudget>;

  constructor(periods: Record<BudgetPeriod, SharedWindowBudget>) {
    this.#periods = periods;
  }

  static async open(docs: DocStore, logger: Logger): Promise<BudgetGate> {
    const collection = await docs.collection<WindowDoc>(limitWindows(BUDGET_WINDOWS));
    const log = logger.child({ component: 'budgets' });
    const warn = (message: string, err: unknown) => log.warn({ err }, message);
    // Small slices: what one gateway holds unspent when another runs out is at most 2% of a budget.
    const common = { collection, warn, borrowAtStart: false, leaseFraction: 0.02 };
    return new BudgetGate({
      day: new SharedWindowBudget({ ...common, windowMs: DAY_MS }),
      month: new SharedWindowBudget({ ...common, windowMs: 31 * DAY_MS, windowOf: monthOf }),
      total: new SharedWindowBudget({ ...common, windowMs: Infinity, windowOf: () => ({ index: 0, start: 0 }) }),
    });
  }

  /** Throws 402 BUDGET_EXCEEDED naming the first spent budget (the account's or the key's, never the secret). */
  check(caller: Caller): void {
    if (caller.account.budgets?.length) this.#checkHolder(accountHolder(caller.account));
    if (caller.budgets?.length) this.#checkHolder(keyHolder(caller));
  }

  /** Counts what an answer cost against its account's and its key's budgets. */
  debit(account: AccountConfig | undefined, key: Caller | undefined, spend: Spend): void {
    if (account?.budgets?.length) this.#debitHolder(accountHolder(account), spend);
    if (key?.budgets?.length) this.#debitHolder(keyHolder(key), spend);
  }

  close(): void {
    for (const budget of Object.values(this.#periods)) budget.close();
  }

  #checkHolder(holder: Holder): void {
    for (const budget of holder.budgets ?? []) {
      if (this.#periods[budget.period].hasLeft(windowKey(holder, budget), units(budget))) continue;
      throw gatewayError('BUDGET_EXCEEDED', {
        args: { budget: holder.label, unit: budget.unit, period: budget.period, limit: budget.limit },
      });
    }
  }

  #debitHolder(holder: Holder, spend: Spend): void {
    for (const budget of holder.budgets ?? []) {
      const amount = budget.unit === 'tokens' ? spend.tokens : Math.round(spend.money * MICROS);
      this.#periods[budget.period].spend(windowKey(holder, budget), units(budget), amount);
    }
  }
}

function keyHolder(caller: Caller): Holder {
  return { label: `API key '${caller.keyName}'`, id: `k${caller.keyId ?? caller.keyName}`, budgets: caller.budgets };
}

function windowKey(holder: Holder, budget: Budget): string {
  return `${holder.id}:${budget.unit}:${budget.period}`;
}

function units(budget: Budget): number {
  return budget.unit === 'tokens' ? Math.floor(budget.limit) : Math.round(budget.limit * MICROS);
}

/**
 * Debits every answer's tokens and cost (the `usage` events), and services' deferred billing charges
 * (money, to the account they name), to the budgets they count against. Returns the unsubscribe.
 */
export function debitBudgets(budgets: BudgetGate, directory: Directory, events: GatewayEvents): () => void {
  const offUsage = events.on('usage', (e) => {
    const key = e.keyId === undefined ? undefined : directory.keyCaller(e.keyId);
    budgets.debit(directory.findAccount(e.accountId), key, { tokens: e.inputTokens + e.outputTokens, money: e.cost ?? 0 });
  });
  const offBilling = events.on('billing', (e) => {
    if (e.accountId !== undefined) budgets.debit(directory.findAccount(e.accountId), undefined, { tokens: 0, money: e.amount });
  });
  return () => {
    offUsage();
    offBilling();
  };
}
