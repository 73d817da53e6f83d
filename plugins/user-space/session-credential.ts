/**
 * A console session as a credential of the platform's one admission (core/admission/http-middleware.ts,
 * `useCredential`): a request with no API key but the `gw_session` cookie calls the predict, fitting,
 * dataset, task and chat routes for the session's *current account* (one account at a time, as an
 * `authToken` is tied to one account), with the permissions of the person's role there, and then
 * goes through every later stage as a key's caller (rate, stream slot, body, access, budgets, usage).
 * A change made with the session must echo its CSRF token (access.ts). The current account is chosen
 * at sign-in (the person's first membership) and changed with `PUT /api/platformcore/auth/session`.
 */
import {
  gatewayError,
  type AccountConfig,
  type Caller,
  type CredentialResolver,
  type Permission,
  type PluginContext,
} from '../../core/plugins/index.js';
import type { Access, Role, SessionPrincipal } from './access.js';

/** What a session may do on the platform, by the person's role on its current account: a viewer only reads. */
const PERMISSIONS_OF_ROLE: Readonly<Record<Role, ReadonlySet<Permission>>> = {
  viewer: new Set<Permission>(['READ_DATA']),
  developer: new Set<Permission>(['MODEL_REQUESTS', 'READ_DATA', 'MODIFY_DATA']),
  owner: new Set<Permission>(['MODEL_REQUESTS', 'READ_DATA', 'MODIFY_DATA']),
  operator: new Set<Permission>(['MODEL_REQUESTS', 'READ_DATA', 'MODIFY_DATA']),
};

/**
 * How a session's calls are named where a key's name would be: `console:<user ID>` to the service
 * called and in logs (a public service of another account learns no email), and `console:<email>` as
 * the key of the account's spend rows, what the usage API groups by `key`.
 */
export const sessionKeyName = (userId: string): string => `console:${userId}`;
export const sessionSpendKey = (email: string): string => `console:${email}`;

export interface CurrentAccount {
  readonly account: AccountConfig;
  readonly role: Role;
}

/** The account a new session acts for: the person's first membership (by account ID) in an account that exists. */
export async function firstAccount(ctx: PluginContext<any>, userId: string): Promise<number | undefined> {
  const memberships = await ctx.userSpace.members.ofUser(userId);
  const ids = memberships.map((m) => m.accountId).filter((id) => ctx.directory.findAccount(id) !== undefined);
  return ids.length ? Math.min(...ids) : undefined;
}

/**
 * The session's current account with the person's role on it; undefined when it has none, or one it may
 * no longer act for (the membership ended, the account was removed). A session from before current
 * accounts acts for the person's first membership.
 */
export async function currentAccount(
  ctx: PluginContext<any>,
  access: Access,
  principal: SessionPrincipal,
): Promise<CurrentAccount | undefined> {
  const id = principal.session.account ?? (await firstAccount(ctx, principal.user._id));
  const account = id === undefined ? undefined : ctx.directory.findAccount(id);
  const role = account && (await access.roleOn(principal, account));
  return account && role ? { account, role } : undefined;
}

/** The resolver the user-space plugin registers: a request's session (none: undefined) as the caller of its current account. */
export function sessionCredential(ctx: PluginContext<any>, access: Access): CredentialResolver {
  return async function sessionCaller(koa): Promise<Caller | undefined> {
    const principal = await access.session(koa);
    if (!principal) return undefined;
    const current = await currentAccount(ctx, access, principal);
    if (!current) throw gatewayError('SESSION_ACCOUNT_REQUIRED');
    return {
      account: current.account,
      keyName: sessionKeyName(principal.user._id),
      keyId: sessionSpendKey(principal.user.email),
      permissions: PERMISSIONS_OF_ROLE[current.role],
    };
  };
}
