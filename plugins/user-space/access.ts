/**
 * The one authorization of the user-space API: every route goes through `access.require(role)`.
 *
 * A principal is a console session (cookie `gw_session`; a change made with it must echo the session's
 * CSRF token in `x-csrf-token`) or `Authorization: Bearer <key>` whose key has MANAGE (it acts as an
 * owner of the key's own account, never as an operator; no CSRF: a browser never sends it by itself).
 * Roles rank operator > owner > developer > viewer; the operator stands above every account.
 * Another account's resources answer 403 ACCESS_TO_ANOTHER_ACCOUNT_DENIED, whether the account exists or
 * not, so a member learns nothing of accounts that are not theirs. The same session, with the same CSRF
 * rule, is a credential of the platform's routes too (session-credential.ts).
 */
import type { Context, Middleware } from 'koa';
import {
  callerOf,
  gatewayError,
  hashesEqual,
  type KeySource,
  type AccountConfig,
  type Caller,
  type MemberRole,
  type PluginContext,
  type SessionDoc,
  type UserDoc,
} from '../../core/plugins/index.js';

export type Role = MemberRole | 'operator';

export const SESSION_COOKIE = 'gw_session';
export const CSRF_HEADER = 'x-csrf-token';

const RANK: Record<Role, number> = { viewer: 1, developer: 2, owner: 3, operator: 4 };

/** Whether `held` includes what `needed` may do. */
export const roleCovers = (held: Role | undefined, needed: Role): boolean => held !== undefined && RANK[held] >= RANK[needed];

export type SessionPrincipal = {
  readonly kind: 'session';
  readonly user: UserDoc;
  readonly session: SessionDoc;
  readonly operator: boolean;
};
export type Principal = SessionPrincipal | { readonly kind: 'key'; readonly caller: Caller; readonly operator: false };

export interface Granted {
  readonly principal: Principal;
  /** The path's account (routes with `:account`); undefined on operator routes without one. */
  readonly account?: AccountConfig;
  /** The principal's role on that account (or `operator`). */
  readonly role: Role;
}

export interface Access {
  /**
   * Signs the caller in (401 SIGN_IN_REQUIRED), checks CSRF for a session's change (403), and requires
   * `role`: `operator` on its own, any other on the path's `:account` (403). Leaves `grantOf(koa)`.
   */
  require(role: Role): Middleware;
  /** Any signed-in principal (auth/me); `session: true`: a console session only (logout, sessions). */
  signedIn(options?: { session?: boolean }): Middleware;
  /**
   * The console session of the request's cookie; undefined when it has none, or an unknown or expired
   * one. A change (not GET, HEAD, OPTIONS) made with it must echo its CSRF token (403 CSRF_TOKEN_INVALID).
   */
  session(koa: Context): Promise<SessionPrincipal | undefined>;
  /** The account `ref` (ID or name) with the principal's role on it; the refusal of `require` when it has none. */
  grantOn(principal: Principal, ref: string | number): Promise<{ account: AccountConfig; role: Role }>;
  /** The principal's role on `account` (`operator` above every account); undefined when it has none. */
  roleOn(principal: Principal, account: AccountConfig): Promise<Role | undefined>;
}

export function grantOf(koa: Context): Granted {
  const granted = koa.state.userSpace as Granted | undefined;
  if (!granted) throw new Error('grantOf: access.require() did not run before this handler');
  return granted;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A MANAGE key comes as `Authorization: Bearer <key>` (the scheme in any case). */
const BEARER_KEY: KeySource = { header: 'Authorization', read: (koa) => /^Bearer\s+(.+)$/i.exec(koa.get('authorization'))?.[1]?.trim() };
const NOTHING_AFTER = async (): Promise<void> => {};

export function createAccess(ctx: PluginContext<any>): Access {
  const { userSpace, directory } = ctx;
  // The key's checks (unknown 401, blocked account 402, no MANAGE 403, its rate 429) are the request
  // path's own: the one admission runs them, then the caller it leaves is read.
  const manageKey = ctx.admission.callerWith(BEARER_KEY, 'MANAGE');
  const countedKey = ctx.admission.counted;

  async function sessionOf(koa: Context): Promise<SessionPrincipal | undefined> {
    const cookie = koa.cookies.get(SESSION_COOKIE);
    const session = cookie ? await userSpace.sessions.find(cookie) : undefined;
    const user = session && (await userSpace.users.get(session.userId));
    if (!session || !user) return undefined;
    if (!SAFE_METHODS.has(koa.method)) {
      const sent = koa.get(CSRF_HEADER);
      if (!sent || !hashesEqual(sent, session.csrf)) throw gatewayError('CSRF_TOKEN_INVALID');
    }
    return { kind: 'session', user, session, operator: user.operator };
  }

  async function principalOf(koa: Context): Promise<Principal> {
    const authorization = koa.get('authorization');
    if (authorization) {
      await manageKey(koa, () => countedKey(koa, NOTHING_AFTER));
      return { kind: 'key', caller: callerOf(koa), operator: false };
    }
    const session = await sessionOf(koa);
    if (!session) throw gatewayError('SIGN_IN_REQUIRED');
    return session;
  }

  async function roleOn(principal: Principal, account: AccountConfig): Promise<Role | undefined> {
    if (principal.kind === 'key') return principal.caller.account.id === account.id ? 'owner' : undefined;
    if (principal.operator) return 'operator';
    return userSpace.members.role(account.id, principal.user._id);
  }

  async function grantOn(principal: Principal, ref: string | number): Promise<{ account: AccountConfig; role: Role }> {
    const account = directory.findAccount(ref);
    const role = account && (await roleOn(principal, account));
    if (!account || !role) {
      if (principal.operator) throw gatewayError('ENTITY_NOT_FOUND_BY_ID', { args: { entity: 'account', id: ref } });
      throw gatewayError('ACCESS_TO_ANOTHER_ACCOUNT_DENIED', { args: { account: ref } });
    }
    return { account, role };
  }

  return {
    session: sessionOf,
    grantOn,
    roleOn,
    require(role) {
      return async function requireRole(koa, next) {
        const principal = await principalOf(koa);
        if (role === 'operator' && koa.params?.account === undefined) {
          if (!principal.operator) throw gatewayError('ROLE_REQUIRED', { args: { role: 'operator' } });
          koa.state.userSpace = { principal, role: 'operator' } satisfies Granted;
          return next();
        }
        const { account, role: held } = await grantOn(principal, koa.params?.account ?? '');
        if (!roleCovers(held, role)) throw gatewayError('ROLE_REQUIRED', { args: { role, account: account.name } });
        koa.state.userSpace = { principal, account, role: held } satisfies Granted;
        return next();
      };
    },
    signedIn(options = {}) {
      return async function signedIn(koa, next) {
        const principal = await principalOf(koa);
        if (options.session && principal.kind !== 'session') throw gatewayError('SIGN_IN_REQUIRED');
        koa.state.userSpace = { principal, role: principal.operator ? 'operator' : 'viewer' } satisfies Granted;
        return next();
      };
    },
  };
}

/** The most a user-space request body may be (a sign-in, an account, a member): far below `server.bodyLimitBytes`. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** A user-space JSON body, bounded (413 REQUEST_TOO_LARGE past BODY_LIMIT_BYTES). */
export function readBody(ctx: PluginContext<any>, koa: Context): Promise<unknown> {
  return ctx.http.readJson(koa, BODY_LIMIT_BYTES);
}
