/**
 * Wake on request (core/gate/wake-on-request.ts): with `waitForInstanceMs`, sync predict, chat and
 * gRPC client calls for a service with no instance wait for one; the service's waker (a command, or an HTTP
 * call) runs once to start it; the wait ends in 503 NO_INSTANCE_IN_TIME with Retry-After, and an
 * account may have only `limits.instanceWaitersPerAccount` requests waiting.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upperHandlers } from '../../examples/upper-service/service.js';
import { ModelService, silentLogger } from '../../sdk/index.js';
import { TEST_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { json, processUnary, rawClient } from '../support/raw-gate-client.js';
import { freePort } from '../support/ports.js';

const WAKER = fileURLToPath(new URL('../fixtures/wake/start-upper.ts', import.meta.url));
const SLEEPY_TOKEN = 'sleepy-service-token-0001';
const HOOKED_TOKEN = 'hooked-service-token-0001';
const LATE_TOKEN = 'late-service-token-00001';

const predict = (gw: TestGateway, model: string, text: string) =>
  fetch(`${gw.httpUrl}/api/platformgate/account/demo/model/${model}/predict`, {
    method: 'POST',
    headers: { 'PLATFORM-API-KEY': TEST_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ text }),
  });

describe('wake on request', () => {
  const work = mkdtempSync(join(tmpdir(), 'wake-'));
  const pidFile = join(work, 'pids');
  let gw: TestGateway;
  let hook: http.Server;
  let hookCalls = 0;
  let hooked: ModelService | undefined;

  beforeAll(async () => {
    const grpcPort = await freePort();
    const grpcAddress = `127.0.0.1:${grpcPort}`;
    // The HTTP waker: the "orchestrator" starts the service when it is called.
    hook = http
      .createServer((req, res) => {
        hookCalls++;
        hooked ??= new ModelService(upperHandlers, {
          descriptor: { name: 'upper' },
          gateways: grpcAddress,
          connectionToken: HOOKED_TOKEN,
          logger: silentLogger,
        }).start();
        res.writeHead(202).end();
      })
      .listen(0, '127.0.0.1');
    await new Promise((r) => hook.once('listening', r));
    const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/wake`;

    gw = await startTestGateway(
      testConfigInput({
        server: { host: '127.0.0.1', httpPort: 0, grpcPort },
        limits: { instanceWaitersPerAccount: 3 },
        services: [
          {
            id: 60,
            name: 'sleepy',
            account: 'demo',
            public: true,
            connectionTokens: [{ token: SLEEPY_TOKEN }],
            waitForInstanceMs: 30_000,
            waker: { command: [process.execPath, '--import', 'tsx', WAKER, grpcAddress, SLEEPY_TOKEN, pidFile], cooldownMs: 60_000 },
          },
          {
            id: 61,
            name: 'hooked',
            account: 'demo',
            public: true,
            family: 'openai',
            connectionTokens: [{ token: HOOKED_TOKEN }],
            waitForInstanceMs: 30_000,
            waker: { url: hookUrl },
          },
          {
            id: 62,
            name: 'absent',
            account: 'demo',
            public: true,
            family: 'openai',
            connectionTokens: [{ token: 'absent-service-token-01' }],
            waitForInstanceMs: 300,
          },
          {
            id: 63,
            name: 'slow',
            account: 'demo',
            public: true,
            connectionTokens: [{ token: 'slow-service-token-0001' }],
            waitForInstanceMs: 1500,
          },
          { id: 64, name: 'late', account: 'demo', public: true, connectionTokens: [{ token: LATE_TOKEN }], waitForInstanceMs: 30_000 },
        ],
        plugins: { enabled: ['sync-predict', 'chatapi'] },
      }),
    );
  }, 30_000);

  afterAll(async () => {
    await hooked?.stop();
    await gw?.close();
    await new Promise((r) => hook?.close(r));
    if (existsSync(pidFile)) {
      for (const pid of readFileSync(pidFile, 'utf8').split('\n').filter(Boolean)) {
        try {
          process.kill(Number(pid), 'SIGTERM');
        } catch {
          // Already gone.
        }
      }
    }
    rmSync(work, { recursive: true, force: true });
  });

  it('waits for an instance, runs the waker command once for concurrent requests, and answers', async () => {
    expect(gw.gateway.gate.hasInstances(60)).toBe(false);
    const answers = await Promise.all(['one', 'two', 'three'].map((text) => predict(gw, 'sleepy', text)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(await Promise.all(answers.map((a) => a.json()))).toEqual([{ upper: 'ONE' }, { upper: 'TWO' }, { upper: 'THREE' }]);
    // One wake for the three waiting requests: the command started one process.
    expect(readFileSync(pidFile, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
  }, 60_000);

  it('calls an HTTP waker, and a chat request waits for the instance it starts', async () => {
    const res = await fetch(`${gw.httpUrl}/api/adapters/chatapi/v1/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/hooked', prompt: 'hi' }),
    });
    expect(hookCalls).toBe(1);
    // The upper-case service does not speak completions, but it answered: the request reached it.
    expect(res.status).not.toBe(503);
    expect(gw.gateway.gate.hasInstances(61)).toBe(true);
  }, 60_000);

  it('ends the wait with 503 NO_INSTANCE_IN_TIME and Retry-After, on the platform API and the chat adapter', async () => {
    const sync = await predict(gw, 'absent', 'x');
    expect(sync.status).toBe(503);
    expect(sync.headers.get('retry-after')).toBe('2');
    expect(((await sync.json()) as { error: { code: string } }).error.code).toBe('NO_INSTANCE_IN_TIME');
    const chat = await fetch(`${gw.httpUrl}/api/adapters/chatapi/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/absent', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(503);
    expect(((await chat.json()) as { error: { code: string } }).error.code).toBe('NO_INSTANCE_IN_TIME');
  });

  it('lets an account have only instanceWaitersPerAccount requests waiting', async () => {
    const answers = await Promise.all([1, 2, 3, 4].map((n) => predict(gw, 'slow', `n${n}`)));
    const codes = await Promise.all(answers.map(async (a) => [a.status, ((await a.json()) as { error: { code: string } }).error.code]));
    expect(codes.filter(([status]) => status === 429)).toEqual([[429, 'TOO_MANY_WAITING_REQUESTS']]);
    expect(codes.filter(([status]) => status === 503)).toHaveLength(3);
  });

  it('makes gRPC client calls wait too: process and processStream reach an instance that connects while they wait', async () => {
    const client = rawClient(gw.grpcAddress);
    const unary = processUnary(client, { account: 'demo', model: 'late', authToken: TEST_KEY, predict: { data: json({ text: 'unary' }) } });
    const streamed = new Promise<unknown[]>((resolve, reject) => {
      const out: unknown[] = [];
      const call = client.processStream();
      call.on('data', (m: unknown) => out.push(m));
      call.on('end', () => resolve(out));
      call.on('error', reject);
      call.write({ account: 'demo', model: 'late', authToken: TEST_KEY, partialPredict: { data: json({ text: 'streamed' }) } });
      call.end();
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(gw.gateway.gate.hasInstances(64)).toBe(false);
    const late = new ModelService(upperHandlers, {
      descriptor: { name: 'upper' },
      gateways: gw.grpcAddress,
      connectionToken: LATE_TOKEN,
      logger: silentLogger,
    }).start();
    try {
      const answer = await unary;
      expect(answer.error).toBeUndefined();
      expect(JSON.parse(answer.predict!.data!.json!)).toEqual({ upper: 'UNARY' });
      // The upper-case service has no partialPredict: its own refusal shows the stream reached it
      // (without the wait, the gateway would have answered NO_ACTIVE_INSTANCES at once).
      const frames = (await streamed) as { error?: { code?: string } }[];
      expect(frames.map((f) => f.error?.code)).toEqual(['platform-action.common.method-not-supported']);
    } finally {
      client.close();
      await late.stop();
    }
  }, 60_000);

  it("ends a gRPC client call's wait with NO_INSTANCE_IN_TIME in-band", async () => {
    const client = rawClient(gw.grpcAddress);
    const answer = await processUnary(client, {
      account: 'demo',
      model: 'absent',
      authToken: TEST_KEY,
      predict: { data: json({ text: 'x' }) },
    });
    client.close();
    expect(answer.error).toMatchObject({ code: 'NO_INSTANCE_IN_TIME', statusCode: 503 });
  });
});
