/**
 * Spend of an account: `GET /api/platformcore/account/{account}/usage?from=&to=&groupBy=day,model,key,service`
 * sums the usage plugin's spend rows (requests, input and output tokens, cost per currency) by the
 * dimensions asked for. Rows are written by the usage plugin every `flushIntervalMs`: a read sees spend
 * that old at most (docs/user-space.md, "Spend").
 */
import type Router from '@koa/router';
import {
  gatewayError,
  groupSpend,
  SPEND_DIMENSIONS,
  SpendStore,
  type PluginContext,
  type SpendDimension,
} from '../../core/plugins/index.js';
import { grantOf, type Access } from './access.js';

const USAGE = '/api/platformcore/account/:account/usage';
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;
/** The longest period one read may cover. */
const MAX_DAYS = 366;

const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

function dayParam(value: unknown, fallback: string, name: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !DAY.test(value) || Number.isNaN(Date.parse(value))) {
    throw gatewayError('VALIDATION_FAILED', { param: name, args: { reason: `${name} must be a day as YYYY-MM-DD` } });
  }
  return value;
}

function groupByParam(value: unknown): SpendDimension[] {
  if (value === undefined || value === '') return ['day'];
  const parts = typeof value === 'string' ? value.split(',').map((p) => p.trim()) : [];
  const known = new Set<string>(SPEND_DIMENSIONS);
  if (parts.length === 0 || parts.some((p) => !known.has(p)) || new Set(parts).size !== parts.length) {
    throw gatewayError('VALIDATION_FAILED', {
      param: 'groupBy',
      args: { reason: `groupBy must list distinct dimensions among ${SPEND_DIMENSIONS.join(', ')}` },
    });
  }
  return parts as SpendDimension[];
}

export function usageRoutes(router: Router, ctx: PluginContext<any>, access: Access): void {
  let spend: Promise<SpendStore> | undefined;
  router.get(USAGE, access.require('viewer'), async (koa) => {
    const account = grantOf(koa).account!;
    const to = dayParam(koa.query.to, dayOf(Date.now()), 'to');
    const from = dayParam(koa.query.from, dayOf(Date.parse(to) - 29 * DAY_MS), 'from');
    if (from > to || Date.parse(to) - Date.parse(from) > (MAX_DAYS - 1) * DAY_MS) {
      throw gatewayError('VALIDATION_FAILED', {
        param: 'from',
        args: { reason: `from must not be after to, and the period at most ${MAX_DAYS} days` },
      });
    }
    const groupBy = groupByParam(koa.query.groupBy);
    spend ??= SpendStore.open(ctx.storage.docs);
    const rows = await (await spend).read(account.id, from, to);
    koa.body = { account: account.name, from, to, groupBy, rows: groupSpend(rows, groupBy) };
  });
}
