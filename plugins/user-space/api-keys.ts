/**
 * API keys of an account: its viewers list and read them; its developers create, change, rotate and revoke
 * them (a key with MANAGE, which acts as an owner, only an owner may give). The secret is in the answer
 * of the create and of a rotation only; the store keeps its hash. Config-file keys are listed read-only
 * (`source: config`, never their secret or hash) and refuse changes (409 CONFIG_ENTRY_READ_ONLY).
 */
import type Router from '@koa/router';
import {
  BUDGETS_SCHEMA,
  compileRequestSchema,
  gatewayError,
  MAX_KEYS_PER_ACCOUNT,
  type AccountConfig,
  type KeyDoc,
  type KeySettings,
  type Permission,
  type PluginContext,
} from '../../core/plugins/index.js';
import { grantOf, roleCovers, type Access, type Role } from './access.js';

const KEYS = '/api/platformcore/account/:account/api-keys';
/** The longest grace a rotation may give the old secret: 30 days. */
const MAX_GRACE_SECONDS = 30 * 86_400;

const keyFields = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  permissions: {
    type: 'array',
    minItems: 1,
    uniqueItems: true,
    items: { enum: ['MODEL_REQUESTS', 'READ_DATA', 'MODIFY_DATA', 'MANAGE'] },
  },
  services: {
    type: ['array', 'null'],
    maxItems: 1000,
    uniqueItems: true,
    items: { type: ['integer', 'string'], minLength: 1, maxLength: 200 },
    description:
      'Services (ID or name, of this account; `<account>/<service>` for a public one) the key may call; null or absent: every service.',
  },
  expiresAt: { type: ['string', 'null'], format: 'date-time' },
  requestsPerSecond: { type: ['integer', 'null'], minimum: 1, maximum: 1_000_000 },
  budgets: BUDGETS_SCHEMA,
};

interface KeyBody {
  name?: string;
  permissions?: Permission[];
  services?: (string | number)[] | null;
  expiresAt?: string | null;
  requestsPerSecond?: number | null;
  budgets?: KeySettings['budgets'];
}

const readCreate = compileRequestSchema<KeyBody & Pick<KeySettings, 'name' | 'permissions'>>({
  type: 'object',
  additionalProperties: false,
  required: ['name', 'permissions'],
  properties: keyFields,
});
const readPatch = compileRequestSchema<KeyBody>({ type: 'object', additionalProperties: false, minProperties: 1, properties: keyFields });
const readRotate = compileRequestSchema<{ gracePeriodSeconds?: number }>({
  type: 'object',
  additionalProperties: false,
  properties: { gracePeriodSeconds: { type: 'integer', minimum: 0, maximum: MAX_GRACE_SECONDS } },
});

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/** A stored key as the API shows it: never its hash. */
function storedView(doc: KeyDoc) {
  return {
    id: doc._id,
    name: doc.name,
    prefix: doc.prefix,
    permissions: doc.permissions,
    services: doc.services ?? null,
    expiresAt: iso(doc.expiresAt),
    requestsPerSecond: doc.requestsPerSecond ?? null,
    budgets: doc.budgets,
    createdAt: iso(doc.createdAt),
    previousKeyValidUntil: doc.previousKeyHash ? iso(doc.previousValidUntil) : null,
    source: 'stored' as const,
  };
}

export function apiKeyRoutes(router: Router, ctx: PluginContext<any>, access: Access): void {
  const { userSpace, directory, config } = ctx;

  /** The config file's keys of the account, by their directory ID `config:<index>`. */
  const configKeys = (account: AccountConfig) =>
    config.apiKeys.flatMap((key, i) =>
      key.accountId === account.id
        ? [
            {
              id: `config:${i}`,
              name: key.name,
              prefix: null,
              permissions: key.permissions,
              services: null,
              expiresAt: null,
              requestsPerSecond: null,
              budgets: [],
              createdAt: null,
              previousKeyValidUntil: null,
              source: 'config' as const,
            },
          ]
        : [],
    );

  /** A config key's ID answers 409 to a change; an unknown ID 404. */
  const storedKey = async (account: AccountConfig, keyId: string): Promise<KeyDoc> => {
    const configKey = configKeys(account).find((k) => k.id === keyId);
    if (configKey) throw gatewayError('CONFIG_ENTRY_READ_ONLY', { args: { entity: 'API key', name: configKey.name } });
    const doc = await userSpace.keys.get(account.id, keyId);
    if (!doc) throw gatewayError('ENTITY_NOT_FOUND_BY_ID', { args: { entity: 'API key', id: keyId } });
    return doc;
  };

  /** MANAGE acts as an owner: only an owner may give it (a developer would otherwise make themselves one). */
  const mayGrant = (role: Role, account: AccountConfig, permissions: readonly Permission[] | undefined) => {
    if (permissions?.includes('MANAGE') && !roleCovers(role, 'owner')) {
      throw gatewayError('ROLE_REQUIRED', { param: 'permissions', args: { role: 'owner', account: account.name } });
    }
  };

  /** Service references resolved to IDs: the account's own services, or public ones as `<account>/<service>`. */
  const serviceIds = (account: AccountConfig, refs: readonly (string | number)[]): number[] =>
    refs.map((ref, i) => {
      const text = String(ref);
      const slash = text.indexOf('/');
      const owner = slash < 0 ? account : directory.findAccount(text.slice(0, slash));
      const service = owner && directory.findService(owner, slash < 0 ? ref : text.slice(slash + 1));
      if (!service || (service.accountId !== account.id && !service.public)) {
        throw gatewayError('VALIDATION_FAILED', {
          param: 'services',
          args: { reason: `services[${i}]: '${text}' names no service this account may call` },
        });
      }
      return service.id;
    });

  const expiry = (value: string | null | undefined): number | null | undefined => {
    if (value === undefined || value === null) return value;
    const ms = Date.parse(value);
    if (!(ms > Date.now()))
      throw gatewayError('VALIDATION_FAILED', { param: 'expiresAt', args: { reason: 'expiresAt must be a future date-time' } });
    return ms;
  };

  const settings = (account: AccountConfig, body: KeyBody): Partial<KeySettings> => ({
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.permissions !== undefined ? { permissions: body.permissions } : {}),
    ...(body.services !== undefined ? { services: body.services && serviceIds(account, body.services) } : {}),
    ...(body.expiresAt !== undefined ? { expiresAt: expiry(body.expiresAt) } : {}),
    ...(body.requestsPerSecond !== undefined ? { requestsPerSecond: body.requestsPerSecond } : {}),
    ...(body.budgets !== undefined ? { budgets: body.budgets } : {}),
  });

  router.get(KEYS, access.require('viewer'), async (koa) => {
    const account = grantOf(koa).account!;
    koa.body = { apiKeys: [...configKeys(account), ...(await userSpace.keys.list(account.id)).map(storedView)] };
  });

  router.post(KEYS, access.require('developer'), async (koa) => {
    const { account, role } = grantOf(koa);
    const body = readCreate(await ctx.http.readJson(koa));
    mayGrant(role, account!, body.permissions);
    const created = await userSpace.keys.create(account!.id, settings(account!, body) as KeySettings);
    if (!created)
      throw gatewayError('CONFLICT', {
        args: { reason: `Account '${account!.name}' holds ${MAX_KEYS_PER_ACCOUNT} API keys, the most it may: revoke one first` },
      });
    koa.status = 201;
    // The one time the secret is shown.
    koa.body = { ...storedView(created.doc), key: created.secret };
  });

  router.get(`${KEYS}/:keyId`, access.require('viewer'), async (koa) => {
    const account = grantOf(koa).account!;
    const keyId = koa.params.keyId!;
    const configKey = configKeys(account).find((k) => k.id === keyId);
    koa.body = configKey ?? storedView(await storedKey(account, keyId));
  });

  router.patch(`${KEYS}/:keyId`, access.require('developer'), async (koa) => {
    const { account, role } = grantOf(koa);
    const before = await storedKey(account!, koa.params.keyId!);
    const body = readPatch(await ctx.http.readJson(koa));
    // Taking MANAGE away, too, is an owner's decision.
    if (body.permissions !== undefined && before.permissions.includes('MANAGE')) mayGrant(role, account!, ['MANAGE']);
    mayGrant(role, account!, body.permissions);
    const doc = await userSpace.keys.update(account!.id, before._id, settings(account!, body));
    if (!doc) throw gatewayError('ENTITY_NOT_FOUND_BY_ID', { args: { entity: 'API key', id: before._id } });
    koa.body = storedView(doc);
  });

  router.delete(`${KEYS}/:keyId`, access.require('developer'), async (koa) => {
    const { account, role } = grantOf(koa);
    const before = await storedKey(account!, koa.params.keyId!);
    if (before.permissions.includes('MANAGE')) mayGrant(role, account!, ['MANAGE']);
    const doc = await userSpace.keys.revoke(account!.id, before._id);
    if (!doc) throw gatewayError('ENTITY_NOT_FOUND_BY_ID', { args: { entity: 'API key', id: before._id } });
    koa.status = 204;
  });

  router.post(`${KEYS}/:keyId/rotate`, access.require('developer'), async (koa) => {
    const { account, role } = grantOf(koa);
    const before = await storedKey(account!, koa.params.keyId!);
    if (before.permissions.includes('MANAGE')) mayGrant(role, account!, ['MANAGE']);
    // The body is optional: no body rotates with no grace.
    const raw = koa.request.length || koa.get('transfer-encoding') ? await ctx.http.readJson(koa) : {};
    const { gracePeriodSeconds = 0 } = readRotate(raw);
    const rotated = await userSpace.keys.rotate(account!.id, before._id, gracePeriodSeconds);
    if (!rotated)
      throw gatewayError('CONFLICT', { args: { reason: `API key '${before._id}' was rotated or revoked meanwhile: read it again` } });
    koa.body = { ...storedView(rotated.doc), key: rotated.secret };
  });
}
