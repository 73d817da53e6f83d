/**
 * Issue 29, the console without API keys: a console session is a credential of the platform's one
 * admission. Against a real gateway on loopback with the echo service: the `gw_session` cookie alone calls
 * Chat Completions and sync predict for the session's current account, with the CSRF token on every
 * change; switching the current account bills the calls there; the role's permissions, the account's
 * budget and sign-out hold as for a key; a key, right or wrong, always wins over the cookie.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoService } from '../../examples/echo-service/service.js';
import { silentLogger, type ModelService } from '../../sdk/index.js';
import { ECHO_TOKEN, TEST_KEY, eventually, testConfigInput, type TestGateway } from '../support/gateway.js';
import { Client, OPERATOR, OWNER, VIEWER, signedIn, startTestGateway } from './support.js';

const U = '/api/platformcore';
const CHAT = '/api/adapters/chatapi/v1/chat/completions';
const PREDICT = '/api/platformgate/account/demo/model/echo/predict';
const SESSION_KEY = `console:${OWNER.email}`;

function sessionConfig(): Record<string, any> {
  const base = testConfigInput();
  return {
    ...base,
    accounts: [
      ...base.accounts,
      // An account of the owner's with a budget of 30 tokens a day: three echo answers of 9 tokens, and one past it.
      { id: 8, name: 'capped', requestsPerSecond: 1000, budgets: [{ unit: 'tokens', limit: 30, period: 'day' }] },
    ],
    services: [{ id: 10, name: 'echo', account: 'demo', public: true, family: 'openai', connectionTokens: [{ token: ECHO_TOKEN }] }],
    plugins: { enabled: ['user-space', 'usage', 'chatapi', 'sync-predict'], options: { usage: { flushIntervalMs: 100 } } },
    userSpace: {
      syncIntervalMs: 100,
      users: [
        { ...OPERATOR, operator: true },
        { ...OWNER, accounts: { demo: 'owner', capped: 'developer' } },
        { ...VIEWER, accounts: { demo: 'viewer' } },
      ],
    },
  };
}

type ErrorBody = { error: { code: string; message: string } };
const codeOf = async (response: Response): Promise<string> => ((await response.json()) as ErrorBody).error.code;

/** The response is the refusal: its status, then its error code. */
async function expectRefused(response: Response, status: number, code: string): Promise<void> {
  expect(response.status).toBe(status);
  expect(await codeOf(response)).toBe(code);
}

describe('a console session as a credential of the platform', () => {
  let gw: TestGateway;
  let echo: ModelService;

  beforeAll(async () => {
    gw = await startTestGateway(sessionConfig());
    echo = startEchoService({ gateways: gw.grpcAddress, connectionToken: ECHO_TOKEN, logger: silentLogger });
    await echo.ready();
  }, 30_000);
  afterAll(async () => {
    await echo?.stop();
    await gw?.close();
  });

  /** A chat request made with the session (its CSRF token sent unless `headers` says otherwise). */
  const chat = (client: Client, headers: Record<string, string> = {}, content = 'one two three four') =>
    client.call('POST', CHAT, { model: 'demo/echo', messages: [{ role: 'user', content }] }, headers);
  const usageKeys = async (client: Client, account: string) => {
    const response = await client.call('GET', `${U}/account/${account}/usage?groupBy=key`);
    expect(response.status, await response.clone().text()).toBe(200);
    return ((await response.json()) as { rows: { key: string; requests: number; inputTokens: number }[] }).rows;
  };

  it('calls Chat Completions (streamed too) and sync predict with the cookie alone, acting for the first account of the person', async () => {
    const owner = await signedIn(gw, OWNER);
    const me = (await (await owner.call('GET', `${U}/auth/me`)).json()) as any;
    expect(me.account).toEqual({ id: 1, name: 'demo', role: 'owner' });

    const answer = await chat(owner);
    expect(answer.status, await answer.clone().text()).toBe(200);
    const completion = (await answer.json()) as { choices: { message: { content: string } }[] };
    expect(completion.choices[0]!.message.content).toContain('one two three four');

    const streamed = await owner.call('POST', CHAT, { model: 'demo/echo', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await streamed.text()).toContain('data: [DONE]');

    const predicted = await owner.call('POST', PREDICT, { messages: [{ role: 'user', content: 'hello' }] });
    expect(predicted.status, await predicted.clone().text()).toBe(200);

    // A read needs no CSRF token: the model list of the adapter.
    const models = await owner.call('GET', '/api/adapters/chatapi/v1/models');
    expect(models.status).toBe(200);
    expect(((await models.json()) as { data: { id: string }[] }).data.map((m) => m.id)).toContain('demo/echo');

    // The usage of the account shows the session's calls under `console:<email>`.
    await eventually(
      async () => (await usageKeys(owner, 'demo')).some((r) => r.key === SESSION_KEY && r.requests >= 3 && r.inputTokens > 0),
      5000,
      "the session's spend rows",
    );
  }, 30_000);

  it('refuses a change made with the cookie without its CSRF token, or with a wrong one (403 CSRF_TOKEN_INVALID)', async () => {
    const owner = await signedIn(gw, OWNER);
    const other = await signedIn(gw, OWNER);
    const bare = await fetch(`${gw.httpUrl}${CHAT}`, {
      method: 'POST',
      headers: { cookie: owner.cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'x' }] }),
    });
    await expectRefused(bare, 403, 'CSRF_TOKEN_INVALID');
    const crossed = await chat(owner, { 'x-csrf-token': other.csrf });
    await expectRefused(crossed, 403, 'CSRF_TOKEN_INVALID');
    const predict = await owner.call('POST', PREDICT, { text: 'x' }, { 'x-csrf-token': 'not-the-token' });
    await expectRefused(predict, 403, 'CSRF_TOKEN_INVALID');
  });

  it('switches the current account (CSRF too) to one of the person, and bills the calls there', async () => {
    const owner = await signedIn(gw, OWNER);
    const noToken = await fetch(`${gw.httpUrl}${U}/auth/session`, {
      method: 'PUT',
      headers: { cookie: owner.cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ account: 'capped' }),
    });
    await expectRefused(noToken, 403, 'CSRF_TOKEN_INVALID');

    const switched = await owner.call('PUT', `${U}/auth/session`, { account: 'capped' });
    expect(switched.status, await switched.clone().text()).toBe(200);
    expect(((await switched.json()) as any).account).toEqual({ id: 8, name: 'capped', role: 'developer' });
    expect(((await (await owner.call('GET', `${U}/auth/session`)).json()) as any).account).toMatchObject({ name: 'capped' });
    expect((await chat(owner, {}, 'a b')).status).toBe(200);
    await eventually(
      async () => (await usageKeys(owner, 'capped')).some((r) => r.key === SESSION_KEY && r.requests === 1),
      5000,
      'spend in capped',
    );

    // Back by ID.
    const back = await owner.call('PUT', `${U}/auth/session`, { account: 1 });
    expect(((await back.json()) as any).account).toEqual({ id: 1, name: 'demo', role: 'owner' });
  }, 30_000);

  it('refuses to switch to an account the person is not a member of, existing or not, alike (403), and keeps the current one', async () => {
    const owner = await signedIn(gw, OWNER);
    for (const account of ['other', 'no-such-account', 999]) {
      const refused = await owner.call('PUT', `${U}/auth/session`, { account });
      expect(refused.status).toBe(403);
      const body = (await refused.json()) as ErrorBody;
      expect(body.error.code).toBe('ACCESS_TO_ANOTHER_ACCOUNT_DENIED');
    }
    const malformed = await owner.call('PUT', `${U}/auth/session`, { account: '' });
    expect(malformed.status).toBe(400);
    expect(((await (await owner.call('GET', `${U}/auth/me`)).json()) as any).account).toMatchObject({ name: 'demo' });
  });

  it("gives a viewer's session only READ_DATA: model calls are refused (403 TOKEN_PERMISSION_REQUIRED), reads answer", async () => {
    const viewer = await signedIn(gw, VIEWER);
    const refused = await chat(viewer);
    await expectRefused(refused, 403, 'TOKEN_PERMISSION_REQUIRED');
    const predict = await viewer.call('POST', PREDICT, { text: 'x' });
    await expectRefused(predict, 403, 'TOKEN_PERMISSION_REQUIRED');
    const read = await viewer.call('GET', '/api/platformgateway/account/demo/usage');
    expect(read.status, await read.clone().text()).toBe(200);
    const notOwn = await viewer.call('GET', '/api/platformgateway/account/other/usage');
    await expectRefused(notOwn, 403, 'ACCESS_TO_ANOTHER_ACCOUNT_DENIED');
  });

  it("stops the session's calls at the current account's budget with the key's coded refusals", async () => {
    const owner = await signedIn(gw, OWNER);
    expect((await owner.call('PUT', `${U}/auth/session`, { account: 'capped' })).status).toBe(200);
    let refusal: Response | undefined;
    let answered = 0;
    for (; answered < 50 && !refusal; answered++) {
      const response = await chat(owner);
      if (response.status !== 200) refusal = response;
    }
    expect(refusal, 'the budget never refused').toBeDefined();
    expect(refusal!.status).toBe(429);
    expect(refusal!.headers.get('x-should-retry')).toBe('false');
    const body = (await refusal!.json()) as { error: { code: string; type: string; message: string } };
    expect(body.error).toMatchObject({ code: 'BUDGET_EXCEEDED', type: 'insufficient_quota' });
    expect(body.error.message).toContain("account 'capped'");
    // The platform API's refusal for the same session (demo's public echo, called for capped): 402.
    const predict = await owner.call('POST', PREDICT, { text: 'x' });
    await expectRefused(predict, 402, 'BUDGET_EXCEEDED');
    // The demo account's budget is not capped's: back there, the session calls again.
    expect((await owner.call('PUT', `${U}/auth/session`, { account: 'demo' })).status).toBe(200);
    expect((await chat(owner)).status).toBe(200);
  }, 30_000);

  it('lets a key win over the cookie: a right key answers as the key, a wrong one is refused, never replaced by the session', async () => {
    const viewer = await signedIn(gw, VIEWER);
    // The viewer's session may not call models; TEST_KEY may: the key decides.
    const withKey = await viewer.call(
      'POST',
      CHAT,
      { model: 'demo/echo', messages: [{ role: 'user', content: 'x' }] },
      { authorization: `Bearer ${TEST_KEY}` },
    );
    expect(withKey.status).toBe(200);

    const owner = await signedIn(gw, OWNER);
    const wrongChat = await chat(owner, { authorization: 'Bearer gwk_wrong-key-wrong-key-wrong-key-000000000' });
    await expectRefused(wrongChat, 401, 'API_KEY_INVALID');
    const wrongPlatform = await owner.call('POST', PREDICT, { text: 'x' }, { 'PLATFORM-API-KEY': 'wrong-key-0000000000000000' });
    await expectRefused(wrongPlatform, 401, 'API_KEY_INVALID');
    // A key in a header this route does not read is a key all the same: no session behind it.
    const elsewhere = await owner.call('POST', PREDICT, { text: 'x' }, { 'x-api-key': 'wrong-key-0000000000000000' });
    await expectRefused(elsewhere, 401, 'API_KEY_MISSING');
  });

  it('answers an unknown cookie, and the cookie of a signed-out session, as no credential (401 API_KEY_MISSING)', async () => {
    const forged = await fetch(`${gw.httpUrl}${CHAT}`, {
      method: 'POST',
      headers: {
        cookie: 'gw_session=forged-forged-forged-forged-forged-forged-00',
        'x-csrf-token': 'x',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'x' }] }),
    });
    await expectRefused(forged, 401, 'API_KEY_MISSING');

    const owner = await signedIn(gw, OWNER);
    expect((await chat(owner)).status).toBe(200);
    expect((await owner.call('POST', `${U}/auth/logout`)).status).toBe(204);
    const after = await chat(owner);
    await expectRefused(after, 401, 'API_KEY_MISSING');
    expect((await owner.call('POST', PREDICT, { text: 'x' })).status).toBe(401);
  });

  it('lets an operator act for any account once chosen; a session whose membership ended may no longer act for it', async () => {
    // The operator is a member of no account: its session acts for none until it chooses one.
    const operator = await signedIn(gw, OPERATOR);
    expect(((await (await operator.call('GET', `${U}/auth/me`)).json()) as any).account).toBeNull();
    const none = await chat(operator);
    await expectRefused(none, 403, 'SESSION_ACCOUNT_REQUIRED');
    const unknown = await operator.call('PUT', `${U}/auth/session`, { account: 'no-such-account' });
    expect(unknown.status).toBe(404);
    const chosen = await operator.call('PUT', `${U}/auth/session`, { account: 'other' });
    expect(((await chosen.json()) as any).account).toEqual({ id: 2, name: 'other', role: 'operator' });
    expect((await chat(operator)).status).toBe(200);

    // A new member of `other`, signed in there; the operator then ends the membership.
    const added = await operator.call('POST', `${U}/account/other/members`, {
      email: 'leaver@example.com',
      role: 'developer',
      password: 'leaver-password-1',
    });
    expect(added.status).toBe(201);
    const { userId } = (await added.json()) as { userId: string };
    const leaver = await signedIn(gw, { email: 'leaver@example.com', password: 'leaver-password-1' });
    expect((await chat(leaver)).status).toBe(200);
    expect((await operator.call('DELETE', `${U}/account/other/members/${userId}`)).status).toBe(204);
    const gone = await chat(leaver);
    await expectRefused(gone, 403, 'SESSION_ACCOUNT_REQUIRED');
  }, 30_000);
});
