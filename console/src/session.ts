/** Sign-in, sign-out, the signed-in user (`auth/me`) read into the console's `Me`, and the session's current account. */
import { call, CORE, setCsrf, ApiError } from './api.js';
import type { Me, Membership, Role } from './model.js';

interface RawMembership {
  id?: number;
  accountId?: number;
  name?: string;
  accountName?: string;
  account?: string | { id?: number; name?: string; displayName?: string; blocked?: boolean };
  displayName?: string;
  role?: Role;
  blocked?: boolean;
}
interface RawMe {
  user?: { id?: string; _id?: string; email?: string; operator?: boolean };
  id?: string;
  email?: string;
  operator?: boolean;
  csrf?: string;
  csrfToken?: string;
  accounts?: RawMembership[];
  memberships?: RawMembership[];
  /** The session's current account: the one its platform and chat calls act for. */
  account?: { id?: number; name?: string } | null;
}

/** The answer of login and `auth/me`, whatever its exact wrapping, as the console uses it. */
export function readMe(raw: RawMe): Me {
  const user = raw.user ?? { id: raw.id, email: raw.email, operator: raw.operator };
  const memberships = raw.accounts ?? raw.memberships ?? [];
  const accounts: Membership[] = memberships.map((m) => {
    const account = typeof m.account === 'object' ? m.account : undefined;
    return {
      id: m.id ?? m.accountId ?? account?.id ?? 0,
      name: m.name ?? m.accountName ?? account?.name ?? (typeof m.account === 'string' ? m.account : String(m.id ?? m.accountId)),
      displayName: m.displayName ?? account?.displayName,
      role: m.role ?? 'viewer',
      blocked: m.blocked ?? account?.blocked,
    };
  });
  const csrf = raw.csrf ?? raw.csrfToken ?? '';
  setCsrf(csrf);
  // `auth/me` says `operator` beside the user (the login answer inside it).
  const operator = Boolean(raw.operator ?? user.operator);
  return { user: { id: user.id ?? user._id ?? '', email: user.email ?? '', operator }, csrf, accounts, current: raw.account?.name };
}

/** The signed-in user, or undefined when there is no session (401). */
export async function currentUser(): Promise<Me | undefined> {
  try {
    return readMe(await call<RawMe>(`${CORE}/auth/me`));
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return undefined;
    throw err;
  }
}

export async function signIn(email: string, password: string): Promise<Me> {
  const answer = await call<RawMe>(`${CORE}/auth/login`, { body: { email, password } });
  // The login answer may carry only the token; `auth/me` has the memberships.
  return answer?.accounts || answer?.memberships ? readMe(answer) : ((await currentUser()) ?? readMe(answer ?? {}));
}

/** Makes `account` the session's current account (the account switcher); answers the session as changed. */
export async function switchAccount(account: string): Promise<Me> {
  return readMe(await call<RawMe>(`${CORE}/auth/session`, { method: 'PUT', body: { account } }));
}

export async function signOut(): Promise<void> {
  await call(`${CORE}/auth/logout`, { method: 'POST' });
  setCsrf('');
}

/**
 * The tabs of this console in one browser share its session cookie, and the session's current account
 * is kept on the server: an account switch in one tab made the other tabs' calls act for that account
 * while they still showed the one before, and a sign-out or a sign-in as someone else went unseen there
 * until a call failed. A tab that changes the session says so here; the others read it again.
 */
const sessionChannel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('gateway-console-session') : undefined;

/** Tells the console's other tabs that this one signed in, switched account or signed out. */
export function announceSessionChange(): void {
  sessionChannel?.postMessage('changed');
}

/** Calls `listener` when another tab of the console changed the session. */
export function onSessionChangedElsewhere(listener: () => void): void {
  sessionChannel?.addEventListener('message', listener);
}
