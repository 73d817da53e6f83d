/**
 * Issue 28, budgets and spend: a spent key or account budget refuses on every interface with its own code
 * (402 BUDGET_EXCEEDED on the platform API and gRPC, 429 insufficient_quota with x-should-retry: false on
 * the chat adapter, what the OpenAI SDK expects), naming the budget and never the key; every answer's
 * tokens and cost (by the service's prices) are recorded and read back by groupBy.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoService } from '../../examples/echo-service/service.js';
import type { ClientRequestProto } from '../../proto/src/index.js';
import { silentLogger, type ModelService } from '../../sdk/index.js';
import { ECHO_TOKEN, TEST_KEY, eventually, testConfigInput, type TestGateway } from '../support/gateway.js';
import { json, processUnary, rawClient } from '../support/raw-gate-client.js';
import { OWNER, signedIn, startTestGateway, type Client } from './support.js';

const SPENDER_KEY = 'test-key-spender-account-0000001';
/** Prices of the echo service: per million tokens. */
const PRICES = { input: 2, output: 4, currency: 'USD' };

function budgetConfig(): Record<string, any> {
  const base = testConfigInput();
  return {
    ...base,
    accounts: [
      ...base.accounts,
      // A config account with a money budget of its own: 0.0002 USD a month is a few echo answers.
      { id: 7, name: 'spender', requestsPerSecond: 1000, budgets: [{ unit: 'money', limit: 0.0002, period: 'month' }] },
    ],
    apiKeys: [...base.apiKeys, { name: 'spender', account: 'spender', key: SPENDER_KEY, permissions: ['MODEL_REQUESTS'] }],
    services: [
      {
        id: 10,
        name: 'echo',
        account: 'demo',
        public: true,
        family: 'openai',
        connectionTokens: [{ token: ECHO_TOKEN }],
        prices: { ...PRICES, models: { 'echo-cheap': { input: 1, output: 1 } } },
      },
      {
        id: 11,
        name: 'second',
        account: 'demo',
        public: false,
        family: 'openai',
        connectionTokens: [{ token: 'second-service-token-001' }],
      },
    ],
    // A registry model's price applies where the service's prices name no price for it.
    registry: {
      providers: [{ name: 'demo' }],
      models: [
        { name: 'echo-reg', providers: ['demo'], createdAt: '2026-01-01T00:00:00Z', prices: { input: 10, output: 10, currency: 'EUR' } },
      ],
    },
    plugins: { enabled: ['user-space', 'usage', 'chatapi', 'sync-predict'], options: { usage: { flushIntervalMs: 100 } } },
    userSpace: { syncIntervalMs: 100, users: [{ ...OWNER, accounts: { demo: 'owner', spender: 'owner' } }] },
  };
}

describe('budgets and spend', () => {
  let gw: TestGateway;
  let echo: ModelService;
  let owner: Client;

  beforeAll(async () => {
    gw = await startTestGateway(budgetConfig());
    echo = startEchoService({ gateways: gw.grpcAddress, connectionToken: ECHO_TOKEN, logger: silentLogger });
    await echo.ready();
    owner = await signedIn(gw, OWNER);
  }, 30_000);
  afterAll(async () => {
    await echo?.stop();
    await gw?.close();
  });

  const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.httpUrl}/api/adapters/chatapi/v1`, maxRetries: 2 });
  const chat = (key: string, content = 'one two three four', model = 'demo/echo') =>
    openai(key).chat.completions.create({ model, messages: [{ role: 'user', content }] });
  const predict = (key: string) =>
    fetch(`${gw.httpUrl}/api/platformgate/account/demo/model/echo/predict`, {
      method: 'POST',
      headers: { 'PLATFORM-API-KEY': key, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
    });
  const grpcPredict = (key: string) =>
    processUnary(rawClient(gw.grpcAddress), {
      authToken: key,
      account: 'demo',
      model: 'echo',
      predict: { data: json({ messages: [{ role: 'user', content: 'hi' }] }) },
    } as ClientRequestProto);

  async function newKey(body: Record<string, unknown>, account = 'demo'): Promise<{ id: string; key: string }> {
    const response = await owner.call('POST', `/api/platformcore/account/${account}/api-keys`, body);
    expect(response.status, await response.clone().text()).toBe(201);
    return (await response.json()) as { id: string; key: string };
  }

  /** Chats until a refusal; returns it, and how many answers came before. */
  async function spendUntilRefused(key: string): Promise<{ answered: number; refusal: InstanceType<typeof OpenAI.APIError> }> {
    for (let answered = 0; answered < 200; answered++) {
      try {
        await chat(key);
      } catch (err) {
        if (err instanceof OpenAI.APIError) return { answered, refusal: err };
        throw err;
      }
    }
    throw new Error('the budget never refused');
  }

  it("a key's token budget: 429 insufficient_quota (no SDK retry) on the chat adapter, 402 BUDGET_EXCEEDED on the platform API and gRPC", async () => {
    // Each echo answer here costs 9 tokens (4 in, 5 out): a budget of 40 tokens allows 4, and one more
    // may go past it (each gateway may admit one request past what it leased).
    const { key } = await newKey({
      name: 'budgeted-app',
      permissions: ['MODEL_REQUESTS'],
      budgets: [{ unit: 'tokens', limit: 40, period: 'day' }],
    });
    const { answered, refusal } = await spendUntilRefused(key);
    expect(answered).toBeGreaterThanOrEqual(4);
    expect(answered).toBeLessThanOrEqual(5);
    expect(refusal.status).toBe(429);
    expect(refusal.type).toBe('insufficient_quota');
    expect(refusal.code).toBe('BUDGET_EXCEEDED');
    expect(refusal.headers?.get('x-should-retry')).toBe('false');
    expect(refusal.message).toContain("API key 'budgeted-app'");
    expect(refusal.message).toContain('40 tokens per day');
    expect(refusal.message).not.toContain(key);

    const platform = await predict(key);
    expect(platform.status).toBe(402);
    const body = (await platform.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('BUDGET_EXCEEDED');
    expect(body.error.message).not.toContain(key);

    const grpc = await grpcPredict(key);
    expect(grpc.error).toMatchObject({ code: 'BUDGET_EXCEEDED', statusCode: 402 });
    expect(grpc.error!.message).toContain("API key 'budgeted-app'");

    // Raising the budget lets the key spend again (the change reaches the gateway through the feed).
    const { id } = (
      (await (await owner.call('GET', '/api/platformcore/account/demo/api-keys')).json()) as { apiKeys: { id: string; name: string }[] }
    ).apiKeys.find((k) => k.name === 'budgeted-app')!;
    expect(
      (
        await owner.call('PATCH', `/api/platformcore/account/demo/api-keys/${id}`, {
          budgets: [{ unit: 'tokens', limit: 100_000, period: 'day' }],
        })
      ).status,
    ).toBe(200);
    await eventually(async () => (await predict(key)).status === 200, 3000, 'the raised budget');
  }, 60_000);

  it("an account's money budget (prices of the service) refuses every key of the account, naming the account", async () => {
    // 4 input and 5 output tokens at 2 and 4 USD per million: 0.000028 USD an answer; 0.0002 allows 7, and one more may go past it.
    const { answered, refusal } = await spendUntilRefused(SPENDER_KEY);
    expect(answered).toBeGreaterThanOrEqual(7);
    expect(answered).toBeLessThanOrEqual(8);
    expect(refusal.status).toBe(429);
    expect(refusal.message).toContain("account 'spender'");
    expect(refusal.message).toContain('in money per month');
    const grpc = await grpcPredict(SPENDER_KEY);
    expect(grpc.error).toMatchObject({ code: 'BUDGET_EXCEEDED', statusCode: 402 });
  }, 60_000);

  it("a key's services list (403 API_KEY_SERVICE_NOT_ALLOWED) and its own rate (429 KEY_RATE_LIMIT_EXCEEDED) on every interface", async () => {
    const { key } = await newKey({ name: 'echo-only', permissions: ['MODEL_REQUESTS'], services: ['echo'] });
    expect((await predict(key)).status).toBe(200);
    const elsewhere = await fetch(`${gw.httpUrl}/api/platformgate/account/demo/model/second/predict`, {
      method: 'POST',
      headers: { 'PLATFORM-API-KEY': key, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(elsewhere.status, await elsewhere.clone().text()).toBe(403);
    expect(((await elsewhere.json()) as { error: { code: string } }).error.code).toBe('API_KEY_SERVICE_NOT_ALLOWED');
    const grpc = await processUnary(rawClient(gw.grpcAddress), {
      authToken: key,
      account: 'demo',
      model: 'second',
      predict: { data: json({}) },
    } as ClientRequestProto);
    expect(grpc.error).toMatchObject({ code: 'API_KEY_SERVICE_NOT_ALLOWED', statusCode: 403 });
    const chatElsewhere = await openai(key)
      .chat.completions.create({ model: 'demo/second', messages: [{ role: 'user', content: 'x' }] })
      .catch((err: unknown) => err);
    expect(chatElsewhere).toMatchObject({ status: 403 });
    // The chat adapter's model list shows only what the key may call (the allow-list is part of the access rule).
    const listed = (await openai(key).models.list()).data.map((m) => m.id);
    expect(listed).toContain('demo/echo');
    expect(listed.filter((id) => id.startsWith('demo/second'))).toEqual([]);
    const unversioned = (await (
      await fetch(`${gw.httpUrl}/api/adapters/chatapi/models`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as {
      data: { id: string }[];
    };
    expect(unversioned.data.map((m) => m.id)).toEqual(listed);
    await expect(openai(key).models.retrieve('demo/second')).rejects.toMatchObject({ status: 404 });
    // A key without a list still sees both.
    const everything = (await openai(TEST_KEY).models.list()).data.map((m) => m.id);
    expect(everything).toEqual(expect.arrayContaining(['demo/echo', 'demo/second']));

    // One request a second: of three at once, at least two are refused by the key's own limit (the account allows 1000).
    const slow = await newKey({ name: 'slow-app', permissions: ['MODEL_REQUESTS'], requestsPerSecond: 1 });
    const answers = await Promise.all([1, 2, 3].map(() => predict(slow.key)));
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(2);
    expect(((await refused[0]!.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'KEY_RATE_LIMIT_EXCEEDED',
      message: expect.stringContaining("API key 'slow-app'"),
    });
  }, 60_000);

  it('records every answer by account, key, service, model and day, and reads it by groupBy', async () => {
    const { id, key } = await newKey({ name: 'spend-reader', permissions: ['MODEL_REQUESTS'] });
    await chat(key, 'a b c d');
    await chat(key, 'a b c d', 'demo/echo/echo-cheap');
    await chat(key, 'a b c d', 'demo/echo/echo-cheap');
    await chat(key, 'a b c d', 'demo/echo/echo-reg');
    const usage = async (query: string) => {
      const response = await owner.call('GET', `/api/platformcore/account/demo/usage?${query}`);
      expect(response.status, await response.clone().text()).toBe(200);
      return (await response.json()) as { rows: Record<string, unknown>[] };
    };
    let rows: Record<string, unknown>[] = [];
    await eventually(
      async () => {
        rows = (await usage('groupBy=key,model')).rows.filter((r) => r.key === id);
        return rows.reduce((n, r) => n + (r.requests as number), 0) === 4;
      },
      5000,
      'the spend rows of the key',
    );
    const byModel = Object.fromEntries(rows.map((r) => [r.model, r]));
    // The default model at the service's prices; echo-cheap at its own.
    expect(byModel['demo/echo']).toMatchObject({
      requests: 1,
      inputTokens: 4,
      outputTokens: 5,
      cost: (4 * 2 + 5 * 4) / 1e6,
      currency: 'USD',
    });
    expect(byModel['demo/echo/echo-cheap']).toMatchObject({
      requests: 2,
      inputTokens: 8,
      outputTokens: 10,
      cost: (8 + 10) / 1e6,
      currency: 'USD',
    });
    expect(byModel['demo/echo/echo-reg']).toMatchObject({
      requests: 1,
      inputTokens: 4,
      outputTokens: 5,
      cost: (4 * 10 + 5 * 10) / 1e6,
      currency: 'EUR',
    });
    const today = new Date().toISOString().slice(0, 10);
    const byDay = (await usage(`from=${today}&to=${today}&groupBy=day,service`)).rows;
    expect(byDay.every((r) => r.day === today && r.service === 'demo/echo')).toBe(true);
    expect(byDay.reduce((n, r) => n + (r.requests as number), 0)).toBeGreaterThanOrEqual(4);
    expect((await owner.call('GET', '/api/platformcore/account/demo/usage?groupBy=colour')).status).toBe(400);
    // The platform usage endpoint keeps working, with the key's tokens in it.
    const platform = await fetch(`${gw.httpUrl}/api/platformgateway/account/demo/usage`, {
      headers: { 'PLATFORM-API-KEY': 'test-key-all-permissions-000001' },
    });
    expect(platform.status).toBe(200);
    expect(((await platform.json()) as { totals: { inputTokens: number } }).totals.inputTokens).toBeGreaterThan(0);
  }, 60_000);
});
