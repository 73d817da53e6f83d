/**
 * Sign-in, sign-out, who am I, sessions, the session's current account, and the first operator's setup.
 * The session cookie is HttpOnly, SameSite=Strict, Path=/, Secure when the request came over TLS; login
 * and `auth/me` return the CSRF token every change made with the session must send in `x-csrf-token`,
 * and the session's current account: the one it calls the platform's APIs for (session-credential.ts),
 * changed with `PUT auth/session {"account"}`.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import {
  compileRequestSchema,
  gatewayError,
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  normaliseEmail,
  sessionView,
  userView,
  type PluginContext,
  type SessionDoc,
  type UserDoc,
} from '../../core/plugins/index.js';
import { type Access, grantOf, readBody, SESSION_COOKIE, type SessionPrincipal } from './access.js';
import { LoginThrottle } from './login-throttle.js';
import { currentAccount, firstAccount } from './session-credential.js';

export const AUTH = '/api/platformcore/auth';

const email = { type: 'string', minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$' };
const password = { type: 'string', minLength: 1, maxLength: MAX_PASSWORD_LENGTH };
export const newPassword = { type: 'string', minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH };

const readLogin = compileRequestSchema<{ email: string; password: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['email', 'password'],
  properties: { email, password },
});
const readSetup = compileRequestSchema<{ token: string; email: string; password: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['token', 'email', 'password'],
  properties: { token: { type: 'string', minLength: 1, maxLength: 256 }, email, password: newPassword },
});

const readSwitch = compileRequestSchema<{ account: string | number }>({
  type: 'object',
  additionalProperties: false,
  required: ['account'],
  properties: {
    account: { type: ['string', 'integer'], minLength: 1, maxLength: 200, description: 'The account (ID or name) the session acts for' },
  },
});

export function authRoutes(router: Router, ctx: PluginContext<any>, access: Access): void {
  const { userSpace, directory } = ctx;
  const throttle = new LoginThrottle(ctx.config.userSpace.loginAttemptsPerMinute);

  // Secure when the request came over TLS, or when the gateway is published over https (`server.publicUrl`)
  // behind a proxy that ends TLS: the browser then never sends the cookie in clear.
  const publishedOverTls = ctx.config.server.publicUrl?.startsWith('https:') === true;
  const writeCookie = (koa: Context, value: string, expires: Date) => {
    const secure = koa.secure || publishedOverTls;
    if (secure) koa.cookies.secure = true;
    koa.cookies.set(SESSION_COOKIE, value, { httpOnly: true, sameSite: 'strict', path: '/', secure, expires, overwrite: true });
  };
  const setCookie = (koa: Context, value: string, expiresAt: number) => writeCookie(koa, value, new Date(expiresAt));
  const clearCookie = (koa: Context) => writeCookie(koa, '', new Date(0));

  const signedInBody = async (user: UserDoc, session: SessionDoc) => {
    const current = await currentAccount(ctx, access, { kind: 'session', user, session, operator: user.operator });
    return {
      user: userView(user),
      csrfToken: session.csrf,
      expiresAt: new Date(session.expiresAt).toISOString(),
      account: current ? { id: current.account.id, name: current.account.name, role: current.role } : null,
    };
  };

  /** What `auth/me` answers for a session, and `auth/session` (read or changed). */
  const sessionBody = async (principal: SessionPrincipal, session: SessionDoc = principal.session) => {
    const memberships = await userSpace.members.ofUser(principal.user._id);
    const accounts = memberships.flatMap((m) => {
      const account = directory.findAccount(m.accountId);
      return account ? [{ id: account.id, name: account.name, role: m.role }] : [];
    });
    return { kind: 'session', ...(await signedInBody(principal.user, session)), operator: principal.operator, accounts };
  };

  router.post(`${AUTH}/login`, async (koa) => {
    const body = readLogin(await readBody(ctx, koa));
    const subjects = [`ip:${koa.ip}`, `email:${normaliseEmail(body.email)}`];
    if (throttle.blocked(subjects)) throw gatewayError('SIGN_IN_RATE_LIMITED');
    const user = await userSpace.users.verify(body.email, body.password);
    if (!user) {
      throttle.fail(subjects);
      throw gatewayError('SIGN_IN_FAILED');
    }
    throttle.succeed(subjects[1]!);
    const { cookie, session } = await userSpace.sessions.open(user._id, koa.get('user-agent'), await firstAccount(ctx, user._id));
    setCookie(koa, cookie, session.expiresAt);
    koa.set('Cache-Control', 'no-store');
    koa.body = await signedInBody(user, session);
  });

  router.post(`${AUTH}/logout`, access.signedIn({ session: true }), async (koa) => {
    const { principal } = grantOf(koa);
    if (principal.kind === 'session') await userSpace.sessions.end(principal.user._id, principal.session._id);
    clearCookie(koa);
    koa.status = 204;
  });

  router.get(`${AUTH}/me`, access.signedIn(), async (koa) => {
    const { principal } = grantOf(koa);
    koa.set('Cache-Control', 'no-store');
    if (principal.kind === 'key') {
      const { account, keyName } = principal.caller;
      const owned = { id: account.id, name: account.name, role: 'owner' };
      koa.body = { kind: 'key', key: { name: keyName }, operator: false, account: owned, accounts: [owned] };
      return;
    }
    koa.body = await sessionBody(principal);
  });

  router.get(`${AUTH}/session`, access.signedIn({ session: true }), async (koa) => {
    const { principal } = grantOf(koa);
    if (principal.kind !== 'session') return;
    koa.set('Cache-Control', 'no-store');
    koa.body = await sessionBody(principal);
  });

  // The account switcher: the session acts for another account of the person's (an operator: any account),
  // refused as the account's own routes refuse it (403, or 404 to an operator for an unknown one).
  router.put(`${AUTH}/session`, access.signedIn({ session: true }), async (koa) => {
    const { principal } = grantOf(koa);
    if (principal.kind !== 'session') return;
    const body = readSwitch(await readBody(ctx, koa));
    const { account } = await access.grantOn(principal, body.account);
    const session = await userSpace.sessions.setAccount(principal.session._id, account.id);
    if (!session) throw gatewayError('SIGN_IN_REQUIRED');
    koa.set('Cache-Control', 'no-store');
    koa.body = await sessionBody(principal, session);
  });

  router.get(`${AUTH}/sessions`, access.signedIn({ session: true }), async (koa) => {
    const { principal } = grantOf(koa);
    if (principal.kind !== 'session') return;
    const sessions = await userSpace.sessions.ofUser(principal.user._id);
    koa.set('Cache-Control', 'no-store');
    koa.body = { sessions: sessions.map((s) => sessionView(s, principal.session._id)) };
  });

  router.delete(`${AUTH}/sessions/:sessionId`, access.signedIn({ session: true }), async (koa) => {
    const { principal } = grantOf(koa);
    if (principal.kind !== 'session') return;
    const id = koa.params.sessionId!;
    // Only one's own: another user's session is as unknown as a made-up ID.
    if (!(await userSpace.sessions.end(principal.user._id, id)))
      throw gatewayError('ENTITY_NOT_FOUND_BY_ID', { args: { entity: 'session', id } });
    if (id === principal.session._id) clearCookie(koa);
    koa.status = 204;
  });

  router.post(`${AUTH}/setup`, async (koa) => {
    const body = readSetup(await readBody(ctx, koa));
    const subjects = [`ip:${koa.ip}`];
    if (throttle.blocked(subjects)) throw gatewayError('SIGN_IN_RATE_LIMITED');
    try {
      const user = await userSpace.setup(body.token, body.email, body.password);
      koa.status = 201;
      koa.body = { user: userView(user) };
    } catch (err) {
      throttle.fail(subjects);
      throw err;
    }
  });
}
