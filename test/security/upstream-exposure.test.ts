/**
 * Issue 25, round three of the hostile-tenant attacks on the upstream connector, each against a real
 * gateway on loopback with two accounts (`demo` owns the engines, `other` is the attacker) and real
 * HTTP engines:
 * - N5: an unreachable engine gave every caller, and the error log, `its engine at
 *   http://engineadmin:S3cretEnginePw@127.0.0.1:1/v1 cannot be reached`, and `x-served-by` showed the
 *   engine's host and port on every answer.
 * - N8: `…/gpt-4-32k-expensive` (a name missing from `upstream.models`) reached the engine as it was,
 *   and `…/constructor`, `…/toString`, `…/__proto__` were looked up on the map's prototype.
 * - Also seen: a CRLF in a header passed to an engine (`anthropic-beta` in a gRPC request's headers)
 *   gave 500 INTERNAL_ERROR.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTHER_ACCOUNT_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { startAnthropicUpstream, startOpenAiUpstream, type Upstream } from '../support/upstream.js';
import { freePort } from '../support/ports.js';
import { capturingLogger } from '../ops/log-capture.js';
import { json, processUnary, rawClient, type RawClient } from '../support/raw-gate-client.js';

const PASSWORD = 'S3cretEnginePw';
const CHAT = '/api/adapters/chatapi/v1/chat/completions';

const service = (id: number, name: string, upstream: Record<string, unknown>) => ({
  id,
  name,
  account: 'demo',
  public: true,
  family: 'openai',
  upstream,
});

describe('hostile tenants: what the upstream connector shows and sends (issue 25)', () => {
  let gw: TestGateway;
  let engine: Upstream;
  let claude: Upstream;
  let client: RawClient;
  let downPort: number;
  const log = capturingLogger();

  beforeAll(async () => {
    engine = await startOpenAiUpstream();
    claude = await startAnthropicUpstream();
    downPort = await freePort();
    gw = await startTestGateway(
      testConfigInput({
        services: [
          service(40, 'down', {
            api: 'openai',
            baseUrl: `http://engineadmin:${PASSWORD}@127.0.0.1:${downPort}/v1`,
            defaultModel: 'm',
            connectTimeoutMs: 2000,
          }),
          service(41, 'engine', {
            api: 'openai',
            baseUrl: `${engine.url}/v1`,
            models: { small: 'engine-small' },
            defaultModel: 'engine-default',
          }),
          service(42, 'open-engine', { api: 'openai', baseUrl: `${engine.url}/v1`, models: { small: 'engine-small' }, passModels: true }),
          { ...service(43, 'claude', { api: 'anthropic', baseUrl: claude.url, defaultModel: 'claude-x' }), family: 'anthropic' },
        ],
        plugins: { enabled: ['chatapi', 'upstream'] },
      }),
      { logger: log.logger },
    );
    client = rawClient(gw.grpcAddress);
  });
  afterAll(async () => {
    client?.close();
    await gw?.close();
    await engine?.close();
    await claude?.close();
  });

  const chat = (model: string) =>
    request(gw.httpUrl)
      .post(CHAT)
      .set('Authorization', `Bearer ${OTHER_ACCOUNT_KEY}`)
      .send({ model, messages: [{ role: 'user', content: 'hi' }] });

  it('N5: an unreachable engine is named by its service only, to callers and in the log', async () => {
    const res = await chat('demo/down').expect(503);
    expect(res.body.error).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: expect.stringContaining("Service 'down' is unavailable right now: its engine cannot be reached"),
    });
    const seen = JSON.stringify(res.body) + JSON.stringify(res.headers);
    for (const secret of [PASSWORD, 'engineadmin', `:${downPort}`]) expect(seen).not.toContain(secret);
    expect(log.text()).toContain('its engine cannot be reached');
    expect(log.text()).not.toContain(PASSWORD);
    expect(log.text()).not.toContain('engineadmin');
  });

  it("N5: x-served-by names the service, not the engine's host and port", async () => {
    const res = await chat('demo/engine/small').expect(200);
    expect(res.headers['x-served-by']).toBe('demo/engine; instance=upstream:engine');
    expect(res.headers['x-served-by']).not.toContain(new URL(engine.url).port);
  });

  it('N8: a model name missing from upstream.models is 404 and never reaches the engine', async () => {
    const before = engine.requests.length;
    for (const name of ['gpt-4-32k-expensive', 'constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const res = await chat(`demo/engine/${name}`).expect(404);
      expect(res.body.error).toMatchObject({ code: 'MODEL_NOT_FOUND', message: expect.stringContaining(`demo/engine/${name}`) });
    }
    expect(engine.requests.length).toBe(before);
    // Mapped names and the default still work.
    await chat('demo/engine/small').expect(200);
    await chat('demo/engine').expect(200);
    // The default named explicitly (the chat adapter sends a service's default model by name) is the operator's choice too.
    await chat('demo/engine/engine-default').expect(200);
    expect(engine.requests.slice(before).map((r) => r.body.model)).toEqual(['engine-small', 'engine-default', 'engine-default']);
  });

  it('N8: a service that opts in (upstream.passModels) passes unmapped names as they are, prototype names too', async () => {
    await chat('demo/open-engine/gpt-4-32k-expensive').expect(200);
    expect(engine.requests.at(-1)!.body.model).toBe('gpt-4-32k-expensive');
    await chat('demo/open-engine/constructor').expect(200);
    expect(engine.requests.at(-1)!.body.model).toBe('constructor');
  });

  it('a CRLF in a header passed to an engine is 400 HEADER_VALUE_INVALID, and nothing reaches the engine', async () => {
    const before = claude.requests.length;
    const res = await processUnary(client, {
      account: 'demo',
      model: 'claude',
      authToken: OTHER_ACCOUNT_KEY,
      headers: { 'anthropic-beta': 'tools-2024\r\nX-Injected: 1' },
      predict: { data: json({ max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }) },
    });
    expect(res.error).toMatchObject({ code: 'HEADER_VALUE_INVALID', statusCode: 400 });
    expect(claude.requests.length).toBe(before);
    // The same request with a clean header is answered.
    const ok = await processUnary(client, {
      account: 'demo',
      model: 'claude',
      authToken: OTHER_ACCOUNT_KEY,
      headers: { 'anthropic-beta': 'tools-2024' },
      predict: { data: json({ max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }) },
    });
    expect(ok.predict).toBeDefined();
    expect(claude.requests.at(-1)!.headers['anthropic-beta']).toBe('tools-2024');
  });
});
