/**
 * Sign-in, sessions and CSRF of the user-space API against a real gateway on loopback: the cookie's
 * flags, a change without (or with another session's) CSRF token refused, sessions listed and ended by
 * their user, expiry, and sign-in guessing slowed per address and per email.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UserDoc } from '../../core/userspace/collections.js';
import { eventually, TEST_KEY, type TestGateway } from '../support/gateway.js';
import { capturingLogger } from '../ops/log-capture.js';
import { Client, DEVELOPER, MANAGE_KEY, OWNER, signedIn, startTestGateway, userSpaceConfig, VIEWER } from './support.js';

const U = '/api/platformcore';

describe('user-space sign-in and sessions', () => {
  let gw: TestGateway;
  const logs = capturingLogger();

  beforeAll(async () => {
    gw = await startTestGateway(userSpaceConfig({ userSpace: { ...userSpaceConfig().userSpace, loginAttemptsPerMinute: 3 } }), {
      logger: logs.logger,
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('signs in with a session cookie that is HttpOnly, SameSite=Strict, Path=/, not Secure over plain HTTP; no-store', async () => {
    const client = new Client(gw.httpUrl);
    const response = await client.login(OWNER);
    expect(response.status).toBe(200);
    const cookie = response.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^gw_session=[A-Za-z0-9_-]{43};/);
    expect(cookie).toMatch(/; path=\//i);
    expect(cookie).toMatch(/; httponly/i);
    expect(cookie).toMatch(/; samesite=strict/i);
    expect(cookie).not.toMatch(/; secure/i);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as any;
    expect(body.user).toMatchObject({ email: OWNER.email, operator: false });
    expect(body.csrfToken).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const me = (await (await client.call('GET', `${U}/auth/me`)).json()) as any;
    expect(me).toMatchObject({
      kind: 'session',
      csrfToken: body.csrfToken,
      operator: false,
      accounts: [{ id: 1, name: 'demo', role: 'owner' }],
    });
  });

  it('marks the cookie Secure when the gateway is published over https (a proxy ends TLS in front of it)', async () => {
    const published = await startTestGateway(
      userSpaceConfig({ server: { httpPort: 0, grpcPort: 0, publicUrl: 'https://gateway.example.com' } }),
    );
    try {
      const response = await fetch(`${published.httpUrl}${U}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(VIEWER),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('set-cookie')).toMatch(/; secure/i);
    } finally {
      await published.close();
    }
  });

  it('refuses a wrong password and an unknown email alike (401 SIGN_IN_FAILED), and keeps no password anywhere', async () => {
    for (const attempt of [
      { ...DEVELOPER, password: 'not-the-password' },
      { email: 'nobody@example.com', password: 'whatever-123' },
    ]) {
      const response = await fetch(`${gw.httpUrl}${U}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.0.0.9' },
        body: JSON.stringify(attempt),
      });
      expect(response.status).toBe(401);
      expect(((await response.json()) as any).error.code).toBe('SIGN_IN_FAILED');
    }
    const stored = await gw.gateway.userSpace.users.collection.find({});
    expect(stored.length).toBeGreaterThan(0);
    for (const user of stored as UserDoc[])
      expect(user.passwordHash).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    const everything = JSON.stringify(stored) + logs.text();
    for (const secret of [OWNER.password, DEVELOPER.password, VIEWER.password, 'not-the-password'])
      expect(everything).not.toContain(secret);
  });

  it("refuses a change made with a session without its CSRF token, or with another session's", async () => {
    const owner = await signedIn(gw, OWNER);
    const other = await signedIn(gw, OWNER);
    const patch = { displayName: 'Demo account' };
    const bare = await fetch(`${gw.httpUrl}${U}/account/demo/members`, {
      method: 'POST',
      headers: { cookie: owner.cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'x@example.com', role: 'viewer', password: 'password-123' }),
    });
    expect(bare.status).toBe(403);
    expect(((await bare.json()) as any).error.code).toBe('CSRF_TOKEN_INVALID');
    const crossed = await owner.call('PATCH', `${U}/accounts/demo`, patch, { 'x-csrf-token': other.csrf });
    expect(crossed.status).toBe(403);
    // The right token: the change reaches the account (a config account: 409 read-only, after authorization).
    const right = await owner.call('PATCH', `${U}/accounts/demo`, patch);
    expect(right.status).toBe(409);
    expect(((await right.json()) as any).error.code).toBe('CONFIG_ENTRY_READ_ONLY');
    // A GET needs no token.
    expect((await fetch(`${gw.httpUrl}${U}/account/demo/members`, { headers: { cookie: owner.cookie } })).status).toBe(200);
  });

  it('takes a MANAGE key as Bearer without CSRF; a key without MANAGE is 403, no credentials 401', async () => {
    const withKey = await fetch(`${gw.httpUrl}${U}/account/demo/members`, { headers: { authorization: `Bearer ${MANAGE_KEY}` } });
    expect(withKey.status).toBe(200);
    const notManage = await fetch(`${gw.httpUrl}${U}/account/demo/members`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(notManage.status).toBe(403);
    expect(((await notManage.json()) as any).error.code).toBe('TOKEN_PERMISSION_REQUIRED');
    const nobody = await fetch(`${gw.httpUrl}${U}/auth/me`);
    expect(nobody.status).toBe(401);
    expect(((await nobody.json()) as any).error.code).toBe('SIGN_IN_REQUIRED');
    const forged = await fetch(`${gw.httpUrl}${U}/auth/me`, {
      headers: { cookie: 'gw_session=forged-forged-forged-forged-forged-forged-00' },
    });
    expect(forged.status).toBe(401);
  });

  it('bounds a body far below server.bodyLimitBytes: a 100 KB sign-in is 413 before any password work', async () => {
    const response = await fetch(`${gw.httpUrl}${U}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: OWNER.email, password: 'x'.repeat(100_000) }),
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as any).error.code).toBe('REQUEST_TOO_LARGE');
  });

  it("lists a person's sessions and ends one (its cookie stops working); logout ends the current one", async () => {
    const first = await signedIn(gw, DEVELOPER);
    const second = await signedIn(gw, DEVELOPER);
    const listed = ((await (await first.call('GET', `${U}/auth/sessions`)).json()) as any).sessions as { id: string; current: boolean }[];
    expect(listed.length).toBeGreaterThanOrEqual(2);
    expect(listed.filter((s) => s.current)).toHaveLength(1);
    const secondId = (
      ((await (await second.call('GET', `${U}/auth/sessions`)).json()) as any).sessions as { id: string; current: boolean }[]
    ).find((s) => s.current)!.id;
    // Another person cannot end it: as unknown as a made-up ID.
    const stranger = await signedIn(gw, VIEWER);
    expect((await stranger.call('DELETE', `${U}/auth/sessions/${secondId}`)).status).toBe(404);
    expect((await second.call('GET', `${U}/auth/me`)).status).toBe(200);
    expect((await first.call('DELETE', `${U}/auth/sessions/${secondId}`)).status).toBe(204);
    expect((await second.call('GET', `${U}/auth/me`)).status).toBe(401);
    const logout = await first.call('POST', `${U}/auth/logout`);
    expect(logout.status).toBe(204);
    expect(logout.headers.get('set-cookie')).toMatch(/^gw_session=;.*expires=Thu, 01 Jan 1970/i);
    expect((await first.call('GET', `${U}/auth/me`)).status).toBe(401);
  });

  it('slows guessing: past the failures allowed per minute, an address and an email get 429 before the password is checked', async () => {
    const from = (ip: string, body: unknown) =>
      fetch(`${gw.httpUrl}${U}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
        body: JSON.stringify(body),
      });
    // Many addresses from one test process: the gateway trusts X-Forwarded-For for this test only.
    gw.gateway.app.proxy = true;
    try {
      // One address, many emails (3 failures allowed).
      for (let i = 0; i < 3; i++)
        expect((await from('10.1.0.1', { email: `guess${i}@example.com`, password: 'guess-guess' })).status).toBe(401);
      const blocked = await from('10.1.0.1', VIEWER);
      expect(blocked.status).toBe(429);
      expect(((await blocked.json()) as any).error.code).toBe('SIGN_IN_RATE_LIMITED');
      expect(blocked.headers.get('retry-after')).toBe('60');
      // One email, many addresses: the right password is refused too until the minute passes.
      for (let i = 0; i < 3; i++) expect((await from(`10.2.0.${i}`, { email: VIEWER.email, password: 'guess-guess' })).status).toBe(401);
      expect((await from('10.3.0.1', VIEWER)).status).toBe(429);
      // Another person from another address is not affected.
      expect((await from('10.4.0.1', OWNER)).status).toBe(200);
    } finally {
      gw.gateway.app.proxy = false;
    }
  });
});

describe('user-space session expiry', () => {
  it('a session ends sessionTtlHours after sign-in', async () => {
    // 1.8 seconds.
    const gw = await startTestGateway(userSpaceConfig({ userSpace: { ...userSpaceConfig().userSpace, sessionTtlHours: 0.0005 } }));
    try {
      const client = await signedIn(gw, OWNER);
      expect((await client.call('GET', `${U}/auth/me`)).status).toBe(200);
      await eventually(async () => (await client.call('GET', `${U}/auth/me`)).status === 401, 10_000, 'the session to expire');
      expect((await client.call('GET', `${U}/account/demo/members`)).status).toBe(401);
    } finally {
      await gw.close();
    }
  });
});
