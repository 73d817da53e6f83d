/**
 * Issue 25, N12: a wake-on-request wait kept its slot after its caller left, so an account's dropped
 * waits locked it out with 429 TOO_MANY_WAITING_REQUESTS for the whole wait (`waitForInstanceMs`).
 * Against a real gateway on loopback: bob fills his `limits.instanceWaitersPerAccount` (3) with waits
 * for a sleeping service and hangs up; his next request must wait again (not 429), over HTTP (sync
 * predict, chat) and gRPC `process`. Alice's waits are her own throughout.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTHER_ACCOUNT_KEY, TEST_KEY, eventually, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { json, rawClient, type RawClient } from '../support/raw-gate-client.js';
import { capturingLogger } from '../ops/log-capture.js';

const WAITERS = 3;

describe('a caller that leaves frees its wait for an instance (issue 25 N12)', () => {
  let gw: TestGateway;
  let client: RawClient;
  const log = capturingLogger();
  /** Waits begun so far (the wake-on-request log line each one writes). */
  const waitsBegun = () => log.lines.filter((l) => l.msg === 'no instance: the request waits for one').length;
  /** Waits ended because their caller left, each once its slot is free (the line wake-on-request writes then). */
  const waitsLeft = () => log.lines.filter((l) => l.msg === 'the caller left: its wait ends').length;

  beforeAll(async () => {
    gw = await startTestGateway(
      testConfigInput({
        limits: { instanceWaitersPerAccount: WAITERS },
        services: [
          {
            id: 70,
            name: 'asleep',
            account: 'demo',
            public: true,
            family: 'openai',
            connectionTokens: [{ token: 'asleep-service-token-01' }],
            waitForInstanceMs: 60_000,
          },
        ],
        plugins: { enabled: ['sync-predict', 'chatapi'] },
      }),
      { logger: log.logger },
    );
    client = rawClient(gw.grpcAddress);
  });
  afterAll(async () => {
    client?.close();
    await gw?.close();
  });

  /** One waiting request by `key`; `leave()` hangs up; `answer` is its status (0 when it was left). */
  type Wait = { answer: Promise<number>; leave(): void };

  const httpWait = (key: string, kind: 'predict' | 'chat'): Wait => {
    const abort = new AbortController();
    const url =
      kind === 'predict'
        ? `${gw.httpUrl}/api/platformgate/account/demo/model/asleep/predict`
        : `${gw.httpUrl}/api/adapters/chatapi/v1/chat/completions`;
    const body = kind === 'predict' ? { text: 'x' } : { model: 'demo/asleep', messages: [{ role: 'user', content: 'x' }] };
    const headers: Record<string, string> = kind === 'predict' ? { 'PLATFORM-API-KEY': key } : { Authorization: `Bearer ${key}` };
    const answer = fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: abort.signal,
    })
      .then(async (res) => (await res.arrayBuffer(), res.status))
      .catch(() => 0);
    return { answer, leave: () => abort.abort() };
  };

  const grpcWait = (key: string): Wait => {
    let call: grpc.ClientUnaryCall | undefined;
    const answer = new Promise<number>((resolve) => {
      call = client.process(
        { account: 'demo', model: 'asleep', authToken: key, predict: { data: json('x') } },
        new grpc.Metadata(),
        (err: grpc.ServiceError | null, res: any) => {
          resolve(err ? 0 : (res?.error?.statusCode ?? 200));
        },
      );
    });
    return { answer, leave: () => call?.cancel() };
  };

  /** Whether a new wait by `key` is admitted: it is still waiting after 300 ms (a refusal is immediate). */
  const admitted = async (key: string): Promise<boolean> => {
    const left = waitsLeft();
    const probe = httpWait(key, 'predict');
    const early = await Promise.race([probe.answer, new Promise<undefined>((r) => setTimeout(r, 300))]);
    probe.leave();
    await probe.answer;
    // An admitted probe's slot is free once the gateway says its wait ended (its access line may come first).
    if (early === undefined) await eventually(() => waitsLeft() > left, 5000, "the probe's wait to end");
    return early === undefined;
  };

  for (const [name, start] of [
    ['sync predict', (key: string) => httpWait(key, 'predict')],
    ['chat', (key: string) => httpWait(key, 'chat')],
    ['gRPC process', (key: string) => grpcWait(key)],
  ] as const) {
    it(`${name}: dropped waits give their slots back`, async () => {
      const begun = waitsBegun();
      const waits = Array.from({ length: WAITERS }, () => start(OTHER_ACCOUNT_KEY));
      await eventually(() => waitsBegun() === begun + WAITERS, 5000, 'the waits to begin');
      // Every slot is held: a further wait of the same account is refused at once…
      expect(await admitted(OTHER_ACCOUNT_KEY)).toBe(false);
      // …and another account's is not.
      expect(await admitted(TEST_KEY)).toBe(true);
      const left = waitsLeft();
      for (const wait of waits) wait.leave();
      expect(await Promise.all(waits.map((w) => w.answer))).toEqual([0, 0, 0]);
      await eventually(() => waitsLeft() === left + WAITERS, 5000, 'the left waits to end');
      // Before the fix the slots stayed held for the whole 60 s wait: every new wait was 429.
      await eventually(() => admitted(OTHER_ACCOUNT_KEY), 5000, 'a new wait to be admitted');
    });
  }
});
