/**
 * Accounts: the operator lists, creates and changes them (`blocked` included); an account's owner changes
 * its display name and budgets; its members read it. Config-file accounts are shown with `source: config`
 * and refuse changes (409 CONFIG_ENTRY_READ_ONLY).
 */
import type Router from '@koa/router';
import { compileRequestSchema, gatewayError, type AccountChanges, type PluginContext } from '../../core/plugins/index.js';
import { type Access, grantOf, readBody, roleCovers } from './access.js';

export const ACCOUNTS = '/api/platformcore/accounts';

export const budgetSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['unit', 'limit', 'period'],
  properties: { unit: { enum: ['tokens', 'money'] }, limit: { type: 'number', minimum: 0 }, period: { enum: ['day', 'month', 'total'] } },
};
const accountFields = {
  name: { type: 'string', pattern: '^(?![0-9]+$)[A-Za-z0-9_.-]+$', minLength: 1, maxLength: 64 },
  displayName: { type: 'string', minLength: 1, maxLength: 200 },
  requestsPerSecond: { type: 'integer', minimum: 1, maximum: 1_000_000 },
  // Its own input rate (core/flow/byte-rate.ts); null: back to limits.inputBytesPerSecondPerAccount.
  inputBytesPerSecond: { type: ['integer', 'null'], minimum: 65_536, maximum: 1024 * 1024 * 1024 },
  blocked: { type: 'boolean' },
  budgets: { type: 'array', maxItems: 16, items: budgetSchema },
};
const readCreate = compileRequestSchema<AccountChanges & { name: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: accountFields,
});
const readPatch = compileRequestSchema<AccountChanges>({
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: accountFields,
});

/** What only the operator may change; an owner changes the rest. */
const OPERATOR_FIELDS = ['name', 'requestsPerSecond', 'inputBytesPerSecond', 'blocked'] as const;

export function accountRoutes(router: Router, ctx: PluginContext<any>, access: Access): void {
  const { userSpace } = ctx;

  router.get(ACCOUNTS, access.require('operator'), async (koa) => {
    koa.body = { accounts: await userSpace.accounts.list() };
  });

  router.post(ACCOUNTS, access.require('operator'), async (koa) => {
    const body = readCreate(await readBody(ctx, koa));
    koa.status = 201;
    koa.body = await userSpace.accounts.create(body);
  });

  router.get(`${ACCOUNTS}/:account`, access.require('viewer'), async (koa) => {
    koa.body = await found(ctx, grantOf(koa).account!.id);
  });

  router.patch(`${ACCOUNTS}/:account`, access.require('owner'), async (koa) => {
    const { account, role } = grantOf(koa);
    const changes = readPatch(await readBody(ctx, koa));
    const reserved = OPERATOR_FIELDS.find((field) => changes[field] !== undefined);
    if (reserved && !roleCovers(role, 'operator')) {
      throw gatewayError('ROLE_REQUIRED', { param: reserved, args: { role: 'operator', account: account!.name } });
    }
    koa.body = await userSpace.accounts.update(await found(ctx, account!.id), changes);
  });
}

async function found(ctx: PluginContext<any>, id: number) {
  const view = await ctx.userSpace.accounts.find(id);
  if (!view) throw gatewayError('ENTITY_NOT_FOUND_BY_ID', { args: { entity: 'account', id } });
  return view;
}
