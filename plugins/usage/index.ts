import { callerOf, definePlugin, gatewayError, SpendStore } from '../../core/plugins/index.js';
import { Accountant } from './accountant.js';
import { DocUsageStore } from './doc-usage-store.js';
import { configSchema, type UsageOptions } from './options.js';
import { dayOf, type UsageRow, type UsageStore } from './usage-store.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;
/** The longest period one read may cover. */
const MAX_DAYS = 366;

interface Running {
  store: UsageStore;
  accountant: Accountant;
  stopPurging: () => void;
}

/**
 * Usage per account: requests, tokens (from the answers' usage) and billing charges (services'
 * deferredBillingCharge(s), each idempotency key once) by service and day, kept in memory or in
 * MongoDB with a retention. `GET /api/platformgateway/account/{account}/usage?from=&to=` lets an
 * account read its own.
 */
export default definePlugin<UsageOptions>({
  name: 'usage',
  description: 'Usage per account (requests, tokens, billing charges by service and day) and the endpoint to read it',
  configSchema,
  create(ctx) {
    // This gateway's usage store and accountant, from start to stop.
    let running: Running | undefined;
    return {
      routes(router) {
        // Only one's own usage: another account, existing or not, is 403 ACCESS_TO_ANOTHER_ACCOUNT_DENIED,
        // as on every account route (it used to say such an account did not exist).
        router.get(
          '/api/platformgateway/account/:account/usage',
          ctx.admission.caller('READ_DATA'),
          ctx.admission.ownAccount,
          async (koa) => {
            const { account } = callerOf(koa);
            const today = dayOf(Date.now());
            const to = dayParam(koa.query.to, today, 'to');
            const from = dayParam(koa.query.from, dayOf(Date.parse(to) - 29 * DAY_MS), 'from');
            if (from > to || Date.parse(to) - Date.parse(from) > (MAX_DAYS - 1) * DAY_MS) {
              throw gatewayError('VALIDATION_FAILED', {
                param: 'from',
                args: { reason: `from must not be after to, and the period at most ${MAX_DAYS} days` },
              });
            }
            const state = running;
            if (!state) throw gatewayError('GATE_IS_SHUT_DOWN');
            await state.accountant.flush();
            const rows = await state.store.read(account.id, from, to);
            koa.body = { account: account.name, from, to, days: rows.map(view), totals: totals(rows) };
          },
        );
      },
      async start() {
        const store = await ctx.storage.open<UsageStore>({ docs: (docs) => DocUsageStore.open(docs) });
        const spend = await SpendStore.open(ctx.storage.docs);
        const accountant = new Accountant(ctx, store, spend);
        const stopPurging = ctx.storage.sweep('usage days', 3_600_000, async () => {
          const before = dayOf(Date.now() - ctx.options.retentionDays * DAY_MS);
          await store.purge(before);
          await spend.purge(before);
        });
        running = { store, accountant, stopPurging };
      },
      async stop() {
        const state = running;
        if (!state) return;
        running = undefined;
        state.stopPurging();
        await state.accountant.close();
        await state.store.close();
      },
    };
  },
});

function dayParam(value: unknown, fallback: string, name: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !DAY.test(value) || Number.isNaN(Date.parse(value))) {
    throw gatewayError('VALIDATION_FAILED', { param: name, args: { reason: `${name} must be a day as YYYY-MM-DD` } });
  }
  return value;
}

function view(row: UsageRow) {
  return {
    day: row.day,
    service: row.service,
    requests: row.requests,
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    charges: row.charges,
    amounts: row.amounts,
  };
}

function totals(rows: readonly UsageRow[]) {
  const sum = { requests: 0, inputTokens: 0, outputTokens: 0, charges: 0, amounts: {} as Record<string, number> };
  for (const row of rows) {
    sum.requests += row.requests;
    sum.inputTokens += row.inputTokens;
    sum.outputTokens += row.outputTokens;
    sum.charges += row.charges;
    for (const [currency, amount] of Object.entries(row.amounts)) sum.amounts[currency] = (sum.amounts[currency] ?? 0) + amount;
  }
  return sum;
}
