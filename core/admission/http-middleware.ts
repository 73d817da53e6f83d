/**
 * Admission of every HTTP route, as router middleware over the checks of core/admission/pipeline.ts
 * (the one place they are made). Two shapes of the one sequence authenticate → rate limit → read
 * body → check → resolve the service → access:
 * - the platform API (sync and async predict, fitting and any plugin in their style): the caller
 *   behind `PLATFORM-API-KEY`, the rate limit, "the path's account must be the caller's", and full
 *   admission to the `:account/:model` service; a route lists the stages it needs:
 *
 * @example
 * router.get('/api/x/account/:account/thing', admission.caller('READ_DATA'), admission.ownAccount, (ctx) => {
 *   const caller = callerOf(ctx);
 * });
 *
 * - a request that names its service in its body (the chat, Responses, Messages, direct and audio
 *   adapters): `admission.request(steps, handler)`, where the route says where its key is, how its
 *   body is read and checked and how the body names the service, and the handler gets all three.
 *
 * Besides an API key, a route takes any credential a plugin registered with `useCredential` (the
 * user-space plugin's console session), for a request that presents no key at all: the credential
 * resolves a caller, which then goes through every later stage exactly as a key's caller. A request
 * with a key never looks at another credential (a wrong key is refused, never replaced), and only
 * such a request pays for resolving one.
 *
 * These are route middleware, not `router.param` loaders: @koa/router runs param loaders before a
 * route's own middleware, so a loader that checks ownership would answer 403 before the key check
 * could answer 401. Entities addressed by ID (tasks, datasets, jobs) are loaded by the plugin after
 * these stages, with the caller they leave in `ctx.state`.
 */
import type { Context, Middleware } from 'koa';
import { API_KEY_HEADER } from '../../proto/src/index.js';
import type { Permission } from '../config/types.js';
import type { Caller, ServiceEntry } from './directory.js';
import type { GatewayError } from '../errors.js';
import type { Pipeline, ServiceRef } from './pipeline.js';

/** The header that carries the API key on the platform API (spec section 6). */
export const PLATFORM_KEY_HEADER = API_KEY_HEADER;

export interface Admission {
  /**
   * Authenticates the key in `PLATFORM-API-KEY` (401, blocked account 402) and requires each of
   * `permissions` (403); leaves the caller in `ctx.state.caller` (read it with `callerOf`).
   */
  caller(...permissions: [Permission, ...Permission[]]): Middleware;
  /** `caller` with the key where `key` says (the chat adapters' routes that name no service: model lists, stored responses). */
  callerWith(key: KeySource, ...permissions: [Permission, ...Permission[]]): Middleware;
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
  /**
   * Every stage of a request that names its service in its body, then `handler` with what was
   * admitted: key from `steps.key` with `steps.permission` (401, 402, 403), rate limit (429), a
   * stream slot when `steps.holdsStream` (429), the body read (`steps.read`: 413) and checked (`steps.check`: 400),
   * the service it names (`steps.target`, with the route's own not-found), access (403 or
   * `steps.denied`). Leaves `ctx.state.caller` and `ctx.state.service`.
   */
  request<Raw, Body, Target extends AdmissionTarget>(
    steps: RequestSteps<Raw, Body, Target>,
    handler: (ctx: Context, admitted: AdmittedRequest<Raw, Body, Target>) => unknown,
  ): Middleware;
  /**
   * Adds a credential besides API keys, tried (in the order added) for a request that presents no key:
   * none of `Authorization`, `x-api-key`, `PLATFORM-API-KEY`.
   */
  useCredential(resolve: CredentialResolver): void;
}

/**
 * The caller a request without an API key stands for by another credential (a console session), or
 * undefined when it carries none of this kind (the request then gets the 401 of a missing key). It
 * throws its own refusals (a session's change without its CSRF token). The caller it returns is
 * checked from the blocked account on, as a key's.
 */
export type CredentialResolver = (ctx: Context) => Promise<Caller | undefined>;

/** Headers that carry an API key on some interface (lower-case): a request with any of them presents a key. */
const KEY_HEADERS = ['authorization', 'x-api-key', API_KEY_HEADER.toLowerCase()] as const;

/** Where a route's API key is sent, and the header the 401 names when none came. */
export interface KeySource {
  read(ctx: Context): string | undefined;
  header: string;
}

/** The service a request's body names, and how the caller named it (for the refusal). */
export interface AdmissionTarget {
  readonly service: ServiceEntry;
  readonly ref?: ServiceRef;
}

/** How one route's request is admitted: what differs between interfaces; the order and the checks do not. */
export interface RequestSteps<Raw, Body, Target extends AdmissionTarget> {
  /** Default: `PLATFORM-API-KEY`. */
  key?: KeySource;
  /** Default: MODEL_REQUESTS. */
  permission?: Permission;
  /** The request holds one of the account's concurrent-stream slots until its response closes; taken before the body is read. */
  holdsStream?: boolean;
  /** Reads the body (413; 400 for one that cannot be read, such as malformed JSON). */
  read(ctx: Context): Promise<Raw>;
  /** Checks what was read (400): the request the route serves. */
  check(raw: Raw): Body;
  /** The service the body names; throws the route's own not-found. */
  target(ctx: Context, caller: Caller, body: Body): Target;
  /** The refusal for a service the caller may not call, when the route's differs from the platform's 403. */
  denied?(ctx: Context, caller: Caller, body: Body): GatewayError;
  /** The refusal for a spent budget, when the route's differs from the platform's 402 (the chat adapters' 429 insufficient_quota). */
  overBudget?(err: GatewayError): GatewayError;
}

export interface AdmittedRequest<Raw, Body, Target extends AdmissionTarget> {
  readonly caller: Caller;
  /** The body as read (for a route that passes it on as it came). */
  readonly raw: Raw;
  readonly body: Body;
  readonly target: Target;
}

/** The caller an admission middleware left on the context. */
export function callerOf(ctx: Context): Caller {
  const caller = ctx.state.caller;
  if (!caller) throw new Error('callerOf: no admission middleware ran before this handler');
  return caller;
}

/** The service `admission.service()` left on the context. */
export function serviceOf(ctx: Context): ServiceEntry {
  const service = ctx.state.service;
  if (!service) throw new Error('serviceOf: admission.service() did not run before this handler');
  return service;
}

/** The platform API's key: `PLATFORM-API-KEY`. */
export const PLATFORM_KEY: KeySource = { read: (ctx) => ctx.get(PLATFORM_KEY_HEADER) || undefined, header: PLATFORM_KEY_HEADER };
const keyOf = PLATFORM_KEY.read;

export function createAdmission(pipeline: Pipeline): Admission {
  const credentials: CredentialResolver[] = [];
  /** The caller by a registered credential, for a request whose route found no key; undefined when none applies. */
  async function resolve(ctx: Context): Promise<Caller | undefined> {
    const headers = ctx.request.headers;
    // A key in a header the route does not read is still a key: refused by its route, never replaced.
    if (KEY_HEADERS.some((name) => headers[name] !== undefined)) return undefined;
    for (const credential of credentials) {
      const caller = await credential(ctx);
      if (caller) return caller;
    }
    return undefined;
  }
  // Each stage below awaits `resolve` only when the request sent no key: a key's request runs as before.
  const callerWith = (key: KeySource, first: Permission, ...more: Permission[]): Middleware =>
    async function admitCaller(ctx, next) {
      const apiKey = key.read(ctx);
      const resolved = apiKey || credentials.length === 0 ? undefined : await resolve(ctx);
      const caller = pipeline.authenticate(apiKey, key.header, first, resolved);
      for (const permission of more) pipeline.requirePermission(caller, permission);
      ctx.state.caller = caller;
      await next();
    };
  return {
    caller: (first, ...more) => callerWith(PLATFORM_KEY, first, ...more),
    callerWith,
    counted: async function countRequest(ctx, next) {
      pipeline.countRequest(callerOf(ctx));
      await next();
    },
    ownAccount: async function ownAccount(ctx, next) {
      pipeline.checkOwnAccount(callerOf(ctx), ctx.params?.account ?? '');
      await next();
    },
    service(permission = 'MODEL_REQUESTS') {
      return async function admitService(ctx, next) {
        const apiKey = keyOf(ctx);
        const { caller, service } = pipeline.admit({
          apiKey,
          keyHeader: PLATFORM_KEY_HEADER,
          resolved: apiKey || credentials.length === 0 ? undefined : await resolve(ctx),
          permission,
          account: ctx.params?.account ?? '',
          model: ctx.params?.model ?? '',
        });
        ctx.state.caller = caller;
        ctx.state.service = service;
        await next();
      };
    },
    request(steps, handler) {
      const key = steps.key ?? PLATFORM_KEY;
      const permission = steps.permission ?? 'MODEL_REQUESTS';
      const { denied } = steps;
      return async function admitRequest(ctx) {
        const apiKey = key.read(ctx);
        const resolved = apiKey || credentials.length === 0 ? undefined : await resolve(ctx);
        const caller = pipeline.authenticate(apiKey, key.header, permission, resolved);
        pipeline.countRequest(caller);
        ctx.state.caller = caller;
        if (steps.holdsStream) ctx.res.once('close', pipeline.openStream(caller));
        const raw = await steps.read(ctx);
        const body = steps.check(raw);
        const target = steps.target(ctx, caller, body);
        pipeline.checkAccess(caller, target.service, target.ref, denied && (() => denied(ctx, caller, body)), steps.overBudget);
        ctx.state.service = target.service;
        await handler(ctx, { caller, raw, body, target });
      };
    },
    useCredential(credential) {
      credentials.push(credential);
    },
  };
}
