/**
 * Admission of the platform API's routes (sync and async predict, fitting and any plugin in their
 * style) as router middleware: the caller behind `PLATFORM-API-KEY`, the rate limit, "the path's
 * account must be the caller's", and full admission to the `:account/:model` service. Each stage is
 * written once here; a route lists the stages it needs:
 *
 * @example
 * router.get('/api/x/account/:account/thing', admission.caller('READ_DATA'), admission.ownAccount, (ctx) => {
 *   const caller = callerOf(ctx);
 * });
 *
 * These are route middleware, not `router.param` loaders: @koa/router runs param loaders before a
 * route's own middleware, so a loader that checks ownership would answer 403 before the key check
 * could answer 401. Entities addressed by ID (tasks, datasets, jobs) are loaded by the plugin after
 * these stages, with the caller they leave in `ctx.state`.
 */
import type { Context, Middleware } from 'koa';
import { API_KEY_HEADER } from '../../proto/src/index.js';
import type { Permission } from '../config/types.js';
import type { Caller, Directory, ServiceEntry } from './directory.js';
import { gatewayError } from '../errors.js';
import type { Pipeline } from './pipeline.js';

/** The header that carries the API key on the platform API (spec section 6). */
export const PLATFORM_KEY_HEADER = API_KEY_HEADER;

export interface Admission {
  /**
   * Authenticates the key in `PLATFORM-API-KEY` (401, blocked account 402) and requires each of
   * `permissions` (403); leaves the caller in `ctx.state.caller` (read it with `callerOf`).
   */
  caller(...permissions: [Permission, ...Permission[]]): Middleware;
  /** Counts the request against the caller's requests per second (429); after `caller`. */
  readonly counted: Middleware;
  /** The path's `:account` (ID or name) must be the caller's own (403 ACCESS_TO_ANOTHER_ACCOUNT_DENIED); after `caller`. */
  readonly ownAccount: Middleware;
  /**
   * Every stage of a predict-style request to the path's `:account/:model` service: key with
   * `permission` (default MODEL_REQUESTS), rate limit, account and service (400), access (403).
   * Leaves `ctx.state.caller` and `ctx.state.service`.
   */
  service(permission?: Permission): Middleware;
}

/** The caller an admission middleware left on the context. */
export function callerOf(ctx: Context): Caller {
  const caller = ctx.state.caller as Caller | undefined;
  if (!caller) throw new Error('callerOf: no admission middleware ran before this handler');
  return caller;
}

/** The service `admission.service()` left on the context. */
export function serviceOf(ctx: Context): ServiceEntry {
  const service = ctx.state.service as ServiceEntry | undefined;
  if (!service) throw new Error('serviceOf: admission.service() did not run before this handler');
  return service;
}

const keyOf = (ctx: Context): string | undefined => ctx.get(PLATFORM_KEY_HEADER) || undefined;

export function createAdmission(pipeline: Pipeline, directory: Directory): Admission {
  return {
    caller(first, ...more) {
      return async function admitCaller(ctx, next) {
        const caller = pipeline.authenticate(keyOf(ctx), PLATFORM_KEY_HEADER, first);
        for (const permission of more) {
          if (!caller.permissions.has(permission)) throw gatewayError('TOKEN_PERMISSION_REQUIRED', { args: { permission } });
        }
        ctx.state.caller = caller;
        await next();
      };
    },
    counted: async function countRequest(ctx, next) {
      pipeline.countRequest(callerOf(ctx));
      await next();
    },
    ownAccount: async function ownAccount(ctx, next) {
      const ref = ctx.params?.account ?? '';
      if (directory.findAccount(ref)?.id !== callerOf(ctx).account.id) {
        throw gatewayError('ACCESS_TO_ANOTHER_ACCOUNT_DENIED', { args: { account: ref } });
      }
      await next();
    },
    service(permission = 'MODEL_REQUESTS') {
      return async function admitService(ctx, next) {
        const { caller, service } = pipeline.admit({
          apiKey: keyOf(ctx),
          keyHeader: PLATFORM_KEY_HEADER,
          permission,
          account: ctx.params?.account ?? '',
          model: ctx.params?.model ?? '',
        });
        ctx.state.caller = caller;
        ctx.state.service = service;
        await next();
      };
    },
  };
}
