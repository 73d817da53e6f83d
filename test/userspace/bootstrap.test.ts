/**
 * The first operator: from GATEWAY_ADMIN_EMAIL/GATEWAY_ADMIN_PASSWORD, or a one-time setup token printed
 * in the log and used with POST /api/platformcore/auth/setup; and `userSpace.users` seeded once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { capturingLogger } from '../ops/log-capture.js';
import { testConfigInput } from '../support/gateway.js';
import { Client, startTestGateway } from './support.js';

const U = '/api/platformcore';
const bare = () => ({ ...testConfigInput(), plugins: { enabled: ['user-space'] } });
const post = (base: string, path: string, body: unknown) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('user-space bootstrap', () => {
  it('creates the operator from GATEWAY_ADMIN_EMAIL and GATEWAY_ADMIN_PASSWORD, and prints no setup token', async () => {
    const logs = capturingLogger();
    const gw = await startTestGateway(bare(), {
      logger: logs.logger,
      env: { GATEWAY_ADMIN_EMAIL: 'Admin@Example.com', GATEWAY_ADMIN_PASSWORD: 'admin-password-1' },
    });
    try {
      const client = new Client(gw.httpUrl);
      expect((await client.login({ email: 'admin@example.com', password: 'admin-password-1' })).status).toBe(200);
      expect(((await (await client.call('GET', `${U}/auth/me`)).json()) as any).operator).toBe(true);
      expect((await client.call('GET', `${U}/accounts`)).status).toBe(200);
      expect(logs.lines.some((l) => l.setupToken)).toBe(false);
      expect(logs.text()).not.toContain('admin-password-1');
    } finally {
      await gw.close();
    }
  });

  it('without them, prints a one-time setup token: a wrong one is 401, the right one creates the operator once', async () => {
    const logs = capturingLogger();
    const gw = await startTestGateway(bare(), { logger: logs.logger, env: {} });
    try {
      const token = logs.lines.find((l) => l.setupToken)?.setupToken as string;
      expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
      const operator = { email: 'first@example.com', password: 'first-password-1' };
      // Its last character changed (to 'x', or to 'y' when it is 'x': one token in 64 ends so).
      const wrongToken = `${token.slice(0, -1)}${token.endsWith('x') ? 'y' : 'x'}`;
      const wrong = await post(gw.httpUrl, `${U}/auth/setup`, { token: wrongToken, ...operator });
      expect(wrong.status).toBe(401);
      expect(((await wrong.json()) as any).error.code).toBe('SETUP_TOKEN_INVALID');
      const short = await post(gw.httpUrl, `${U}/auth/setup`, { token, email: operator.email, password: 'short' });
      expect(short.status).toBe(400);
      const made = await post(gw.httpUrl, `${U}/auth/setup`, { token, ...operator });
      expect(made.status).toBe(201);
      expect(((await made.json()) as any).user).toMatchObject({ email: operator.email, operator: true });
      const again = await post(gw.httpUrl, `${U}/auth/setup`, { token, email: 'second@example.com', password: 'second-password-1' });
      expect(again.status).toBe(401);
      const client = new Client(gw.httpUrl);
      expect((await client.login(operator)).status).toBe(200);
      expect((await client.login({ email: 'second@example.com', password: 'second-password-1' })).status).toBe(401);
    } finally {
      await gw.close();
    }
  });

  it('seeds userSpace.users once (with memberships), leaving an existing person as it is', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'us-seed-'));
    const input = (password: string) => ({
      ...bare(),
      store: { kind: 'embedded', dataDir },
      userSpace: { users: [{ email: 'seed@example.com', password, operator: true, accounts: { demo: 'owner', other: 'viewer' } }] },
    });
    const first = await startTestGateway(input('seed-password-1'), { env: {} });
    try {
      const client = new Client(first.httpUrl);
      expect((await client.login({ email: 'seed@example.com', password: 'seed-password-1' })).status).toBe(200);
      expect(((await (await client.call('GET', `${U}/auth/me`)).json()) as any).accounts).toEqual([
        { id: 1, name: 'demo', role: 'owner' },
        { id: 2, name: 'other', role: 'viewer' },
      ]);
    } finally {
      await first.close();
    }
    // A restart with another password in the file: the stored person keeps the first.
    const second = await startTestGateway(input('seed-password-2'), { env: {} });
    try {
      const client = new Client(second.httpUrl);
      expect((await client.login({ email: 'seed@example.com', password: 'seed-password-2' })).status).toBe(401);
      expect((await client.login({ email: 'seed@example.com', password: 'seed-password-1' })).status).toBe(200);
    } finally {
      await second.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
