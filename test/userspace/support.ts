import { startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';

export const OPERATOR = { email: 'op@example.com', password: 'operator-password-1' };
export const OWNER = { email: 'owner@example.com', password: 'owner-password-1' };
export const DEVELOPER = { email: 'dev@example.com', password: 'developer-password-1' };
export const VIEWER = { email: 'viewer@example.com', password: 'viewer-password-1' };
export const OUTSIDER = { email: 'other-owner@example.com', password: 'other-owner-password-1' };
export const MANAGE_KEY = 'test-key-manage-demo-00000001';
export const MANAGE_OTHER_KEY = 'test-key-manage-other-0000001';

/** The test config with the user-space plugin, a MANAGE key per account, and people of every role. */
export function userSpaceConfig(overrides: Record<string, unknown> = {}): Record<string, any> {
  const base = testConfigInput();
  return {
    ...base,
    apiKeys: [
      ...base.apiKeys,
      { name: 'manage', account: 'demo', key: MANAGE_KEY, permissions: ['MANAGE'] },
      { name: 'manage-other', account: 'other', key: MANAGE_OTHER_KEY, permissions: ['MANAGE', 'MODEL_REQUESTS'] },
    ],
    plugins: { enabled: ['user-space', 'sync-predict', 'health'] },
    userSpace: {
      syncIntervalMs: 100,
      users: [
        { ...OPERATOR, operator: true },
        { ...OWNER, accounts: { demo: 'owner' } },
        { ...DEVELOPER, accounts: { demo: 'developer' } },
        { ...VIEWER, accounts: { demo: 'viewer' } },
        { ...OUTSIDER, accounts: { other: 'owner' } },
      ],
    },
    ...overrides,
  };
}

/** A browser-like client of one gateway: keeps the session cookie and the CSRF token. */
export class Client {
  cookie = '';
  csrf = '';
  constructor(readonly base: string) {}

  async login(person: { email: string; password: string }): Promise<Response> {
    const response = await fetch(`${this.base}/api/platformcore/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(person),
    });
    if (response.ok) {
      this.cookie = /gw_session=[^;]*/.exec(response.headers.get('set-cookie') ?? '')?.[0] ?? '';
      this.csrf = ((await response.clone().json()) as { csrfToken: string }).csrfToken;
    }
    return response;
  }

  call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    const sent: Record<string, string> = { ...headers };
    if (this.cookie) sent.cookie = this.cookie;
    if (this.csrf && method !== 'GET') sent['x-csrf-token'] ??= this.csrf;
    if (body !== undefined) sent['content-type'] = 'application/json';
    return fetch(`${this.base}${path}`, { method, headers: sent, body: body === undefined ? undefined : JSON.stringify(body) });
  }
}

export async function signedIn(gateway: Pick<TestGateway, 'httpUrl'>, person: { email: string; password: string }): Promise<Client> {
  const client = new Client(gateway.httpUrl);
  const response = await client.login(person);
  if (!response.ok) throw new Error(`sign-in of ${person.email} failed: ${response.status} ${await response.text()}`);
  return client;
}

export { startTestGateway };
