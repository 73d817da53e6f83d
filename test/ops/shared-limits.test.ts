/**
 * The per-account rate across gateway processes sharing one MongoDB (MONGODB_URI, else
 * mongo-java-server; skipped loudly without either): with two and with three gateways, the requests
 * admitted per second stay within 10% of the account's rate on average under steady overload, and nothing is
 * refused below the rate.
 */
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfigInput } from '../support/gateway.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { spawnGateway, type GatewayProcess } from './support/spawn-gateway.js';

const RATE = 40;
const KEY = 'test-key-shared-limit-00000001';
const SECONDS = 4;
/** Callers per gateway in the overload: enough to ask for more than the rate on a busy machine. */
const CALLERS = 6;

function configFor(mongodbUri: string): Record<string, unknown> {
  const input = testConfigInput({ plugins: { enabled: ['chatapi'] }, store: { kind: 'mongodb', mongodbUri } });
  input.accounts.push({ id: 7, name: 'shared', requestsPerSecond: RATE });
  input.apiKeys.push({ name: 'shared', account: 'shared', key: KEY, permissions: ['MODEL_REQUESTS'] });
  return input;
}

type PerSecond = Map<number, { admitted: number; refused: number }>;

const send = (gw: GatewayProcess, dispatcher: Agent) =>
  fetch(`${gw.httpUrl}/api/adapters/chatapi/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: '{"model":"shared/none","messages":[]}',
    dispatcher,
  } as RequestInit);

/** One answer: when it was sent and answered (this machine's clock, which the gateways share), and its status. */
interface Answer {
  sentAt: number;
  answeredAt: number;
  refused: boolean;
  /**
   * The second (Unix) it was admitted or refused in: the second it reached the gateway, by the
   * gateway's own clock (`x-test-arrived-at`, set by the test's gateway process; the decision follows
   * within a moment). Counting by when it was sent or answered misplaces the many requests in flight
   * across a second's edge, and the first requests of a window are the ones admitted.
   */
  second: number;
}

async function answer(gw: GatewayProcess, dispatcher: Agent): Promise<Answer> {
  const sentAt = Date.now();
  const res = await send(gw, dispatcher);
  await res.arrayBuffer();
  // Anything but 429 is admitted: the model does not exist, an admitted request is a quick 404.
  const arrivedAt = Number(res.headers.get('x-test-arrived-at'));
  expect(arrivedAt).toBeGreaterThan(0);
  return { sentAt, answeredAt: Date.now(), refused: res.status === 429, second: Math.floor(arrivedAt / 1000) };
}

/** Admitted and refused answers per second they were decided in (the windows are whole seconds). */
function perSecondOf(answers: Answer[]): PerSecond {
  const perSecond: PerSecond = new Map();
  for (const a of answers) {
    const counts = perSecond.get(a.second) ?? { admitted: 0, refused: 0 };
    if (a.refused) counts.refused++;
    else counts.admitted++;
    perSecond.set(a.second, counts);
  }
  return perSecond;
}

/** Overload: CALLERS callers per gateway sending back to back for SECONDS seconds. */
async function overload(gateways: GatewayProcess[]): Promise<Answer[]> {
  const dispatcher = new Agent({ connections: 8 });
  const answers: Answer[] = [];
  const end = Date.now() + SECONDS * 1000;
  await Promise.all(
    gateways.flatMap((gw) =>
      Array.from({ length: CALLERS }, async () => {
        while (Date.now() < end) answers.push(await answer(gw, dispatcher));
      }),
    ),
  );
  await dispatcher.close();
  return answers;
}

/** Below the limit: `total` requests spread evenly over SECONDS seconds, in turn over the gateways. */
async function paced(gateways: GatewayProcess[], total: number): Promise<Answer[]> {
  const dispatcher = new Agent({ connections: 8 });
  const start = Date.now();
  const requests: Promise<Answer>[] = [];
  for (let i = 0; i < total; i++) {
    const wait = start + (i * SECONDS * 1000) / total - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    requests.push(answer(gateways[i % gateways.length]!, dispatcher));
  }
  const answers = await Promise.all(requests);
  await dispatcher.close();
  return answers;
}

/**
 * The most answers admitted inside any two neighbouring whole seconds, counting only answers sent and
 * answered inside them by this machine's clock: those were surely admitted there.
 */
function mostAdmittedInTwoSeconds(answers: Answer[]): number {
  const admitted = answers.filter((a) => !a.refused);
  const first = Math.floor(Math.min(...admitted.map((a) => a.sentAt)) / 1000);
  const last = Math.floor(Math.max(...admitted.map((a) => a.answeredAt)) / 1000);
  let most = 0;
  for (let second = first; second < last; second++) {
    const [from, to] = [second * 1000, (second + 2) * 1000];
    most = Math.max(most, admitted.filter((a) => a.sentAt >= from && a.answeredAt < to).length);
  }
  return most;
}

/** The seconds between the first and the last (those two may be partly covered by the load). */
const interior = (perWindow: PerSecond) =>
  [...perWindow.entries()]
    .sort(([a], [b]) => a - b)
    .slice(1, -1)
    .map(([, counts]) => counts);

describe.skipIf(!requirePrerequisite('shared rate limits on MongoDB', mongoPrerequisite()))(
  'shared rate limits across gateway processes',
  () => {
    let server: MongoTestServer;
    /**
     * Three gateway processes on one database, started once: the first test's load goes to two of them,
     * the second's to all three. A gateway leases a share of a window's rate only when it admits a
     * request, so the idle third takes nothing from the first test's two.
     */
    const running: GatewayProcess[] = [];
    beforeAll(async () => {
      server = await startMongo();
      const uri = server.freshDatabaseUri();
      running.push(...(await Promise.all(Array.from({ length: 3 }, () => spawnGateway(configFor(uri))))));
    });
    afterAll(async () => {
      await Promise.all(running.map((g) => g.stop()));
      await server?.stop();
    });

    for (const count of [2, 3]) {
      it(`holds ${RATE}/s within 10% with ${count} gateways, and refuses nothing below the rate`, async () => {
        const gateways = running.slice(0, count);
        // Overload: every whole second in which callers asked for more than the rate admits the rate,
        // within 10% on average (counted by the second each reached its gateway in), and no two
        // neighbouring seconds admit more than 10% above twice the rate, counting the answers sent and
        // answered inside them (this machine's clock alone).
        const answers = await overload(gateways);
        const seconds = interior(perSecondOf(answers));
        const mostInTwo = mostAdmittedInTwoSeconds(answers);
        process.stdout.write(
          `shared limit, ${count} gateways, ${RATE}/s: admitted/refused per second ${seconds.map((s) => `${s.admitted}/${s.refused}`).join(', ')}; at most ${mostInTwo} surely in two seconds\n`,
        );
        expect(mostInTwo).toBeLessThanOrEqual(2 * RATE * 1.1);
        const over = seconds.filter((s) => s.refused > 0);
        expect(over.length).toBeGreaterThanOrEqual(2);
        const mean = over.reduce((n, s) => n + s.admitted, 0) / over.length;
        expect(mean).toBeGreaterThanOrEqual(RATE * 0.9);
        expect(mean).toBeLessThanOrEqual(RATE * 1.1);
        // The overload's last window is spent: start the next phase in a fresh one.
        await new Promise((r) => setTimeout(r, 1100));
        // Below the rate (half of it): nothing refused.
        const under = await paced(gateways, (RATE / 2) * SECONDS);
        expect(under.filter((a) => a.refused)).toHaveLength(0);
      }, 120_000);
    }
  },
);
