/**
 * The role matrix of the user-space API: each principal (operator, owner, developer, viewer, the owner
 * of another account, a MANAGE key of each account, a key without MANAGE, nobody) × each endpoint of
 * accounts, members and services × its own account and another one, against a real gateway on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, type TestGateway } from '../support/gateway.js';
import {
  Client,
  DEVELOPER,
  MANAGE_KEY,
  MANAGE_OTHER_KEY,
  OPERATOR,
  OUTSIDER,
  OWNER,
  signedIn,
  startTestGateway,
  userSpaceConfig,
  VIEWER,
} from './support.js';

type Role = 'viewer' | 'developer' | 'owner' | 'operator';
const RANK: Record<Role, number> = { viewer: 1, developer: 2, owner: 3, operator: 4 };
const ACCOUNTS = ['demo', 'other'] as const;
type AccountName = (typeof ACCOUNTS)[number];

interface Principal {
  name: string;
  /** Its role on each account (undefined: none); `operator` stands above every account. */
  roles: Partial<Record<AccountName, Role>>;
  operator: boolean;
  /** Makes a request as this principal. */
  call: (method: string, path: string, body?: unknown) => Promise<Response>;
}

/** An endpoint on one account; `setup` prepares what a repeatable call needs (a member to remove). */
interface Endpoint {
  name: string;
  needs: Role;
  run: (p: Principal, account: AccountName) => Promise<Response>;
  ok: number;
}

const U = '/api/platformcore';

describe('user-space role matrix', () => {
  let gw: TestGateway;
  let operator: Client;
  const principals: Principal[] = [];
  let counter = 0;
  /** A fresh member of `account` (made by the operator), for calls that change or remove one. */
  const freshMember = async (account: AccountName): Promise<string> => {
    const response = await operator.call('POST', `${U}/account/${account}/members`, {
      email: `m${++counter}@example.com`,
      role: 'viewer',
      password: 'member-password',
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { userId: string }).userId;
  };

  /** A fresh stored service of `account` (made by the operator), for calls that read, change or remove one. */
  const freshService = async (account: AccountName): Promise<number> => {
    const response = await operator.call('POST', `${U}/account/${account}/services`, { name: `svc-${++counter}` });
    expect(response.status).toBe(201);
    return ((await response.json()) as { id: number }).id;
  };

  const endpoints: Endpoint[] = [
    { name: 'GET accounts/{a}', needs: 'viewer', ok: 200, run: (p, a) => p.call('GET', `${U}/accounts/${a}`) },
    {
      name: 'PATCH accounts/{a} displayName',
      needs: 'owner',
      ok: 409,
      run: (p, a) => p.call('PATCH', `${U}/accounts/${a}`, { displayName: 'X' }),
    },
    {
      name: 'PATCH accounts/{a} blocked',
      needs: 'operator',
      ok: 409,
      run: (p, a) => p.call('PATCH', `${U}/accounts/${a}`, { blocked: false }),
    },
    { name: 'GET members', needs: 'viewer', ok: 200, run: (p, a) => p.call('GET', `${U}/account/${a}/members`) },
    {
      name: 'POST members',
      needs: 'owner',
      ok: 201,
      run: (p, a) =>
        p.call('POST', `${U}/account/${a}/members`, { email: `n${++counter}@example.com`, role: 'viewer', password: 'member-password' }),
    },
    {
      name: 'PATCH members/{id}',
      needs: 'owner',
      ok: 200,
      run: async (p, a) => p.call('PATCH', `${U}/account/${a}/members/${await freshMember(a)}`, { role: 'developer' }),
    },
    {
      name: 'DELETE members/{id}',
      needs: 'owner',
      ok: 204,
      run: async (p, a) => p.call('DELETE', `${U}/account/${a}/members/${await freshMember(a)}`),
    },
    { name: 'GET services', needs: 'viewer', ok: 200, run: (p, a) => p.call('GET', `${U}/account/${a}/services`) },
    {
      name: 'POST services',
      needs: 'developer',
      ok: 201,
      run: (p, a) => p.call('POST', `${U}/account/${a}/services`, { name: `new-svc-${++counter}` }),
    },
    {
      name: 'GET services/{s}',
      needs: 'viewer',
      ok: 200,
      run: async (p, a) => p.call('GET', `${U}/account/${a}/services/${await freshService(a)}`),
    },
    {
      name: 'PATCH services/{s}',
      needs: 'developer',
      ok: 200,
      run: async (p, a) => p.call('PATCH', `${U}/account/${a}/services/${await freshService(a)}`, { public: true }),
    },
    {
      name: 'DELETE services/{s}',
      needs: 'developer',
      ok: 204,
      run: async (p, a) => p.call('DELETE', `${U}/account/${a}/services/${await freshService(a)}`),
    },
  ];

  beforeAll(async () => {
    gw = await startTestGateway(userSpaceConfig());
    operator = await signedIn(gw, OPERATOR);
    const session = async (name: string, person: { email: string; password: string }, roles: Principal['roles'], isOperator = false) => {
      const client = await signedIn(gw, person);
      principals.push({ name, roles, operator: isOperator, call: (m, path, body) => client.call(m, path, body) });
    };
    await session('operator', OPERATOR, {}, true);
    await session('owner of demo', OWNER, { demo: 'owner' });
    await session('developer of demo', DEVELOPER, { demo: 'developer' });
    await session('viewer of demo', VIEWER, { demo: 'viewer' });
    await session('owner of other', OUTSIDER, { other: 'owner' });
    const bearer = (key: string) => (method: string, path: string, body?: unknown) =>
      fetch(`${gw.httpUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    principals.push({ name: 'MANAGE key of demo', roles: { demo: 'owner' }, operator: false, call: bearer(MANAGE_KEY) });
    principals.push({ name: 'MANAGE key of other', roles: { other: 'owner' }, operator: false, call: bearer(MANAGE_OTHER_KEY) });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('each principal × each account endpoint × its own account and another', async () => {
    const problems: string[] = [];
    for (const p of principals) {
      for (const endpoint of endpoints) {
        for (const account of ACCOUNTS) {
          const held: Role | undefined = p.operator ? 'operator' : p.roles[account];
          const expected = !held
            ? { status: 403, code: 'ACCESS_TO_ANOTHER_ACCOUNT_DENIED' }
            : RANK[held] >= RANK[endpoint.needs]
              ? { status: endpoint.ok, code: endpoint.ok === 409 ? 'CONFIG_ENTRY_READ_ONLY' : undefined }
              : { status: 403, code: 'ROLE_REQUIRED' };
          const response = await endpoint.run(p, account);
          const text = await response.text();
          const code = text ? (JSON.parse(text) as { error?: { code?: string } }).error?.code : undefined;
          if (response.status !== expected.status || code !== expected.code) {
            problems.push(
              `${p.name} ${endpoint.name} on ${account}: ${response.status} ${code ?? ''}, expected ${expected.status} ${expected.code ?? ''}`,
            );
          }
        }
      }
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it('operator routes: list and create accounts only as the operator (a MANAGE key never is one)', async () => {
    const problems: string[] = [];
    for (const p of principals) {
      const list = await p.call('GET', `${U}/accounts`);
      const create = await p.call('POST', `${U}/accounts`, { name: `acct-${++counter}` });
      const expected = p.operator ? [200, 201] : [403, 403];
      if (list.status !== expected[0] || create.status !== expected[1])
        problems.push(`${p.name}: ${list.status} ${create.status}, expected ${expected.join(' ')}`);
      if (!p.operator) expect(((await create.json()) as any).error.code).toBe('ROLE_REQUIRED');
    }
    expect(problems).toEqual([]);
  });

  it('a stored account: its owner changes displayName and budgets but not blocked, name or rates; the operator changes all', async () => {
    const created = await operator.call('POST', `${U}/accounts`, { name: 'acme', displayName: 'Acme', requestsPerSecond: 5 });
    expect(created.status).toBe(201);
    const acme = (await created.json()) as { id: number };
    // Above the config file's largest account ID (3).
    expect(acme.id).toBeGreaterThan(3);
    expect(acme).toMatchObject({
      name: 'acme',
      displayName: 'Acme',
      requestsPerSecond: 5,
      inputBytesPerSecond: null,
      blocked: false,
      budgets: [],
      source: 'stored',
    });
    expect((await operator.call('POST', `${U}/account/acme/members`, { email: OWNER.email, role: 'owner' })).status).toBe(201);
    const owner = principals.find((p) => p.name === 'owner of demo')!;
    const budgets = [{ unit: 'tokens', limit: 1000, period: 'day' }];
    const changed = await owner.call('PATCH', `${U}/accounts/acme`, { displayName: 'Acme Inc', budgets });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({ displayName: 'Acme Inc', budgets });
    for (const field of [{ blocked: true }, { name: 'acme2' }, { requestsPerSecond: 1000 }, { inputBytesPerSecond: 1 << 30 }]) {
      const refused = await owner.call('PATCH', `${U}/accounts/acme`, field);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as any).error).toMatchObject({ code: 'ROLE_REQUIRED', param: Object.keys(field)[0] });
    }
    const blocked = await operator.call('PATCH', `${U}/accounts/acme`, { blocked: true, requestsPerSecond: 7 });
    expect(await blocked.json()).toMatchObject({ blocked: true, requestsPerSecond: 7 });
    expect(gw.gateway.directory.findAccount('acme')).toMatchObject({ blocked: true, requestsPerSecond: 7 });
    // Its own input rate (core/flow/byte-rate.ts reads it from the directory at each charge), and null
    // to fall back to limits.inputBytesPerSecondPerAccount.
    const ownRate = await operator.call('PATCH', `${U}/accounts/acme`, { inputBytesPerSecond: 16 * 1024 * 1024 });
    expect(await ownRate.json()).toMatchObject({ inputBytesPerSecond: 16 * 1024 * 1024 });
    expect(gw.gateway.directory.findAccount('acme')?.inputBytesPerSecond).toBe(16 * 1024 * 1024);
    const tooLow = await operator.call('PATCH', `${U}/accounts/acme`, { inputBytesPerSecond: 1024 });
    expect(tooLow.status).toBe(400);
    expect(((await tooLow.json()) as any).error).toMatchObject({ code: 'VALIDATION_FAILED', param: 'inputBytesPerSecond' });
    const cleared = await operator.call('PATCH', `${U}/accounts/acme`, { inputBytesPerSecond: null });
    expect(await cleared.json()).toMatchObject({ inputBytesPerSecond: null });
    expect(gw.gateway.directory.findAccount('acme')?.inputBytesPerSecond).toBeUndefined();
    // A stored account may not take a config account's name, nor another stored one's.
    expect((await operator.call('POST', `${U}/accounts`, { name: 'demo' })).status).toBe(409);
    expect((await operator.call('POST', `${U}/accounts`, { name: 'acme' })).status).toBe(409);
    expect((await operator.call('PATCH', `${U}/accounts/acme`, { name: 'other' })).status).toBe(409);
    // Bad input: a coded 400 naming the field, nothing changed.
    const bad = await operator.call('PATCH', `${U}/accounts/acme`, { budgets: [{ unit: 'coins', limit: 1, period: 'day' }] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error).toMatchObject({ code: 'VALIDATION_FAILED', param: 'budgets' });
    expect(((await (await operator.call('GET', `${U}/accounts/acme`)).json()) as any).budgets).toEqual(budgets);
  });

  it("members: adding by email links an existing person or creates one with the owner's password; the last owner stays", async () => {
    const owner = principals.find((p) => p.name === 'owner of other')!;
    const missingPassword = await owner.call('POST', `${U}/account/other/members`, { email: 'newcomer@example.com', role: 'developer' });
    expect(missingPassword.status).toBe(400);
    expect(((await missingPassword.json()) as any).error.param).toBe('password');
    const created = await owner.call('POST', `${U}/account/other/members`, {
      email: 'Newcomer@Example.com',
      role: 'developer',
      password: 'newcomer-password',
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ email: 'newcomer@example.com', role: 'developer', created: true });
    const newcomer = new Client(gw.httpUrl);
    expect((await newcomer.login({ email: 'newcomer@example.com', password: 'newcomer-password' })).status).toBe(200);
    expect(((await (await newcomer.call('GET', `${U}/auth/me`)).json()) as any).accounts).toEqual([
      { id: 2, name: 'other', role: 'developer' },
    ]);
    const linked = await owner.call('POST', `${U}/account/other/members`, { email: VIEWER.email, role: 'viewer' });
    expect(await linked.json()).toMatchObject({ email: VIEWER.email, created: false });
    expect((await owner.call('POST', `${U}/account/other/members`, { email: VIEWER.email, role: 'owner' })).status).toBe(409);
    const members = ((await (await owner.call('GET', `${U}/account/other/members`)).json()) as any).members as {
      userId: string;
      email: string;
      role: string;
    }[];
    const self = members.find((m) => m.email === OUTSIDER.email)!;
    expect(self.role).toBe('owner');
    const demote = await owner.call('PATCH', `${U}/account/other/members/${self.userId}`, { role: 'viewer' });
    expect(demote.status).toBe(409);
    expect((await owner.call('DELETE', `${U}/account/other/members/${self.userId}`)).status).toBe(409);
    expect((await owner.call('DELETE', `${U}/account/other/members/usr_nobody`)).status).toBe(404);
    // A key without MANAGE is not a principal here.
    expect((await fetch(`${gw.httpUrl}${U}/account/demo/members`, { headers: { authorization: `Bearer ${TEST_KEY}` } })).status).toBe(403);
  });
});
