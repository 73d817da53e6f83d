/**
 * Issue 25, N6: one account took every engine connection. With `maxConcurrency: 4`, bob's 8 slow
 * calls made alice's call to the same engine wait 18 s (it queued behind all of bob's in the
 * connection pool). Against a real gateway on loopback and a real HTTP engine that holds "slow"
 * requests until the test lets them go: by default an account runs at most maxConcurrency - 1 engine
 * requests, so alice is answered while bob's are all held; with `maxConcurrencyPerAccount` equal to
 * the connections, a freed connection goes to the accounts in turn, alice's before bob's next.
 */
import type http from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTHER_ACCOUNT_KEY, TEST_KEY, eventually, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { startScriptedEngine, type ScriptedEngine } from '../support/upstream.js';

const reply = (res: http.ServerResponse, content: string) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    }),
  );

describe("an engine's connections are shared fairly between accounts (issue 25 N6)", () => {
  let gw: TestGateway;
  let engine: ScriptedEngine;
  /** Slow requests the engine holds, in arrival order, with their text. */
  const held: { text: string; res: http.ServerResponse }[] = [];

  beforeAll(async () => {
    engine = await startScriptedEngine((_req, res, body) => {
      const text = String(body.messages.at(-1).content);
      if (text.startsWith('slow')) held.push({ text, res });
      else reply(res, `done: ${text}`);
    });
    const upstream = (extra: Record<string, unknown> = {}) => ({
      api: 'openai',
      baseUrl: engine.url,
      defaultModel: 'm',
      maxConcurrency: 4,
      ...extra,
    });
    gw = await startTestGateway(
      testConfigInput({
        services: [
          { id: 90, name: 'shared', account: 'demo', public: true, family: 'openai', upstream: upstream() },
          { id: 91, name: 'turns', account: 'demo', public: true, family: 'openai', upstream: upstream({ maxConcurrencyPerAccount: 4 }) },
        ],
        plugins: { enabled: ['chatapi', 'upstream'] },
      }),
    );
  });
  afterAll(async () => {
    for (const { res } of held.splice(0)) res.destroy();
    await gw?.close();
    await engine?.close();
  });

  const chat = (key: string, model: string, content: string) =>
    request(gw.httpUrl)
      .post('/api/adapters/chatapi/v1/chat/completions')
      .set('Authorization', `Bearer ${key}`)
      .send({ model, messages: [{ role: 'user', content }] })
      .then((r) => r);

  /** Requests the service's engine instance has taken (running at the engine or waiting for a connection). */
  const inFlight = (serviceId: number) => gw.gateway.gate.instances(serviceId)[0]?.inFlight ?? 0;

  /** Lets the engine answer every held request, as they come, until `done` settles. */
  const drain = async <T>(done: Promise<T>): Promise<T> => {
    let finished = false;
    void done.finally(() => (finished = true));
    while (!finished) {
      for (const { text, res } of held.splice(0)) reply(res, `done: ${text}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return done;
  };

  it('by default an account leaves a connection for the others: alice is answered while bob holds the rest', async () => {
    const bob = Array.from({ length: 8 }, (_, i) => chat(OTHER_ACCOUNT_KEY, 'demo/shared', `slow bob ${i}`));
    await eventually(() => held.length === 3 && inFlight(90) === 8, 5000, "bob's requests to reach the engine's instance");
    const stuck = Symbol('stuck');
    const alice = await Promise.race([chat(TEST_KEY, 'demo/shared', 'alice'), new Promise<symbol>((r) => setTimeout(r, 5000, stuck))]);
    // Before the fix alice's call waited behind all of bob's (18 s in the attack; here until released).
    expect(alice).not.toBe(stuck);
    expect((alice as request.Response).status).toBe(200);
    expect((alice as request.Response).body.choices[0].message.content).toBe('done: alice');
    // Bob never had more than his share at the engine, and none of his requests is lost.
    expect(held.map((h) => h.text)).toEqual(['slow bob 0', 'slow bob 1', 'slow bob 2']);
    const answers = await drain(Promise.all(bob));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
  });

  it("a freed connection goes to the waiting accounts in turn: alice's request before bob's next", async () => {
    const bob = Array.from({ length: 8 }, (_, i) => chat(OTHER_ACCOUNT_KEY, 'demo/turns', `slow bob ${i}`));
    await eventually(() => held.length === 4, 5000, "bob's first requests to take every connection");
    const before = engine.requests.length;
    const alice = chat(TEST_KEY, 'demo/turns', 'slow alice');
    // Once alice's request waits at the engine's instance (bob's 8 and hers), free one of bob's connections.
    await eventually(() => inFlight(91) === 9, 5000, "alice's request to wait for a connection");
    const first = held.shift()!;
    reply(first.res, `done: ${first.text}`);
    await eventually(() => engine.requests.length > before, 5000, 'the next request to reach the engine');
    expect(engine.requests[before]!.body.messages[0].content).toBe('slow alice');
    const [answers, aliceAnswer] = await drain(Promise.all([Promise.all(bob), alice]));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(aliceAnswer.status).toBe(200);
  });
});
