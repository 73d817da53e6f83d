import type { AccountConfig } from '../config/types.js';
import type { Caller, Directory } from '../admission/directory.js';
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

/** UTC calendar months, counted since January 1970; the index is kept while the clock stays in its month. */
function monthWindows(): { indexOf(now: number): number; startOf(index: number): number } {
  let from = 0;
  let until = -1;
  let current = 0;
  return {
    indexOf(now) {
      if (now < from || now >= until) {
        const date = new Date(now);
        current = (date.getUTCFullYear() - 1970) * 12 + date.getUTCMonth();
        from = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
        until = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
      }
      return current;
    },
    startOf: (index) => Date.UTC(1970 + Math.floor(index / 12), index % 12, 1),
  };
}

/** One window for ever. */
const FOREVER = { indexOf: () => 0, startOf: () => 0 };

/** A spent budget, as BUDGET_EXCEEDED names it. */
export interface SpentBudget {
  budget: string;
  unit: BudgetUnit;
  period: BudgetPeriod;
  limit: number;
}

/** What one answer cost: tokens, and money in the service's currency (0 when it has no prices). */
export interface Spend {
  tokens: number;
  money: number;
}

/**
 * The window keys of each budgets list, made once: a check looks them up and builds no string. Keyed by
 * the list itself (an account's or a key's, replaced whole when it changes).
 */
const windowKeys = new WeakMap<readonly Budget[], readonly string[]>();

function keysOf(holderId: string, budgets: readonly Budget[]): readonly string[] {
  let keys = windowKeys.get(budgets);
  if (!keys) windowKeys.set(budgets, (keys = budgets.map((b) => `${holderId}:${b.unit}:${b.period}`)));
  return keys;
}

/** A key's budgets are its own: by its stored ID (config-file keys have no budgets). */
const keyHolderId = (caller: Caller): string => `k${caller.keyId ?? caller.keyName}`;

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
      month: new SharedWindowBudget({ ...common, windowMs: 31 * DAY_MS, windows: monthWindows() }),
      total: new SharedWindowBudget({ ...common, windowMs: Infinity, windows: FOREVER }),
    });
  }

  /**
   * The first spent budget of the caller's account or key, as the refusal's arguments (the budget named by
   * its account's or key's name, never the secret); undefined while every one has some left.
   */
  spent(caller: Caller): SpentBudget | undefined {
    const account = caller.account;
    const ofAccount = account.budgets?.length ? this.#spent(`a${account.id}`, account.budgets) : undefined;
    if (ofAccount) return { budget: `account '${account.name}'`, ...ofAccount };
    const ofKey = caller.budgets?.length ? this.#spent(keyHolderId(caller), caller.budgets) : undefined;
    return ofKey && { budget: `API key '${caller.keyName}'`, ...ofKey };
  }

  /** Counts what an answer cost against its account's and its key's budgets. */
  debit(account: AccountConfig | undefined, key: Caller | undefined, spend: Spend): void {
    if (account?.budgets?.length) this.#debit(`a${account.id}`, account.budgets, spend);
    if (key?.budgets?.length) this.#debit(keyHolderId(key), key.budgets, spend);
  }

  close(): void {
    for (const budget of Object.values(this.#periods)) budget.close();
  }

  #spent(holderId: string, budgets: readonly Budget[]): Omit<SpentBudget, 'budget'> | undefined {
    const keys = keysOf(holderId, budgets);
    for (let i = 0; i < budgets.length; i++) {
      const budget = budgets[i]!;
      if (!this.#periods[budget.period].hasLeft(keys[i]!, units(budget)))
        return { unit: budget.unit, period: budget.period, limit: budget.limit };
    }
    return undefined;
  }

  #debit(holderId: string, budgets: readonly Budget[], spend: Spend): void {
    const keys = keysOf(holderId, budgets);
    for (let i = 0; i < budgets.length; i++) {
      const budget = budgets[i]!;
      const amount = budget.unit === 'tokens' ? spend.tokens : Math.round(spend.money * MICROS);
      this.#periods[budget.period].spend(keys[i]!, units(budget), amount);
    }
  }
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
