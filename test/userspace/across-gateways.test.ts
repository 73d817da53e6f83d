/**
 * The change feed across gateways sharing one store: an account created or blocked through the API of
 * one gateway reaches every other within 2 s (the documented bound, with the default 500 ms interval),
 * and a blocked account's calls answer 402 ACCOUNT_BLOCKED there on HTTP predict, the chat adapter and
 * gRPC. Homes: the embedded SQLite file (two handles in this process, and a second gateway *process* on
 * the same file) and MongoDB (the MongoDB-wire server).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../core/admission/secret-hashes.js';
import type { Gateway } from '../../core/gateway.js';
import { killHard, startConfigGateway } from '../support/config-gateway.js';
import { ECHO_TOKEN, eventually, type TestGateway } from '../support/gateway.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { json, processUnary, rawClient, startOkService, type RawClient } from '../support/raw-gate-client.js';
import { Client, OPERATOR, signedIn, startTestGateway, userSpaceConfig } from './support.js';

const U = '/api/platformcore';
/** The documented staleness bound with the default syncIntervalMs (docs/user-space.md#across-gateways). */
const BOUND_MS = 2_000;
const ACME_KEY = 'test-key-of-stored-account-acme-01';

const config = (store: Record<string, unknown>) => {
  const input = userSpaceConfig({ store });
  input.plugins.enabled.push('chatapi', 'async-predict');
  // The default interval: the bound under test is the one users get.
  delete input.userSpace.syncIntervalMs;
  return input;
};

/**
 * A key of the stored account, put into a gateway's Directory as a stored key is applied there (the API
 * keys of the user space arrive through the same feed and hook: Directory.putKey).
 */
function giveKey(gateway: Gateway, accountId: number): void {
  gateway.directory.putKey({
    id: 'key_test_acme',
    accountId,
    hashes: [hashSecret(ACME_KEY)],
    caller: (account) => ({ account, keyName: 'acme-app', permissions: new Set(['MODEL_REQUESTS']) }),
  });
}

interface Calls {
  http: number;
  async: number;
  chat: number;
  grpc: number | undefined;
  codes: string[];
}

async function callAll(gw: TestGateway, client: RawClient): Promise<Calls> {
  const http = await fetch(`${gw.httpUrl}/api/platformgate/account/demo/model/echo/predict`, {
    method: 'POST',
    headers: { 'PLATFORM-API-KEY': ACME_KEY, 'content-type': 'application/json' },
    body: '{"hi":1}',
  });
  const task = await fetch(`${gw.httpUrl}/api/platformgateway/account/demo/model/echo/async/predict`, {
    method: 'POST',
    headers: { 'PLATFORM-API-KEY': ACME_KEY, 'content-type': 'application/json' },
    body: '{"hi":1}',
  });
  const chat = await fetch(`${gw.httpUrl}/api/adapters/chatapi/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ACME_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
  });
  const grpc = await processUnary(client, { account: 'demo', model: 'echo', authToken: ACME_KEY, predict: { data: json({ hi: 1 }) } });
  const code = async (r: Response) => ((await r.json().catch(() => ({}))) as { error?: { code?: string } }).error?.code ?? '';
  return {
    http: http.status,
    async: task.status,
    chat: chat.status,
    grpc: grpc.error ? grpc.error.statusCode : 200,
    codes: [await code(http), await code(task), await code(chat), grpc.error?.code ?? ''],
  };
}

function suite(home: string, open: () => Promise<{ store: Record<string, unknown>; cleanup: () => Promise<void> | void }>, skip = false) {
  describe.skipIf(skip)(`user space across two gateways on ${home}`, () => {
    let a: TestGateway;
    let b: TestGateway;
    let operator: Client;
    let cleanup: () => Promise<void> | void = () => undefined;
    const clients: RawClient[] = [];

    beforeAll(async () => {
      const opened = await open();
      cleanup = opened.cleanup;
      a = await startTestGateway(config(opened.store));
      b = await startTestGateway(config(opened.store));
      operator = await signedIn(a, OPERATOR);
      for (const gw of [a, b]) {
        const client = rawClient(gw.grpcAddress);
        clients.push(client);
        startOkService(client, ECHO_TOKEN, 'echo');
      }
    });
    afterAll(async () => {
      for (const client of clients) client.close();
      await a?.close();
      await b?.close();
      await cleanup();
    });

    it('a stored account created on one gateway is callable on the other; blocked, every interface there answers 402 within the bound; unblocked, callable again', async () => {
      const created = await operator.call('POST', `${U}/accounts`, { name: 'acme', requestsPerSecond: 1000 });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: number };
      expect(a.gateway.directory.findAccount('acme')?.id).toBe(id); // at once where it was made
      await eventually(() => b.gateway.directory.findAccount('acme')?.id === id, BOUND_MS, 'the account on the second gateway');
      for (const gw of [a, b]) giveKey(gw.gateway, id);

      const before = await callAll(b, clients[1]!);
      expect(before, 'callable before it is blocked').toMatchObject({ http: 200, async: 200, grpc: 200 });
      expect(before.chat).not.toBe(402);

      expect((await operator.call('PATCH', `${U}/accounts/acme`, { blocked: true })).status).toBe(200);
      await eventually(
        async () => (await callAll(b, clients[1]!)).http === 402,
        BOUND_MS,
        'HTTP predict answering 402 on the second gateway',
      );
      const blocked = 'ACCOUNT_BLOCKED';
      expect(await callAll(b, clients[1]!)).toEqual({
        http: 402,
        async: 402,
        chat: 402,
        grpc: 402,
        codes: [blocked, blocked, blocked, blocked],
      });
      expect((await callAll(a, clients[0]!)).codes).toEqual([blocked, blocked, blocked, blocked]);

      expect((await operator.call('PATCH', `${U}/accounts/acme`, { blocked: false })).status).toBe(200);
      await eventually(
        async () => (await callAll(b, clients[1]!)).http === 200,
        BOUND_MS,
        'HTTP predict answering again on the second gateway',
      );
      expect(await callAll(b, clients[1]!)).toMatchObject({ http: 200, grpc: 200 });
    });

    it('the API reads the same on both gateways: members, sessions and accounts are in the shared store', async () => {
      const onB = await signedIn(b, OPERATOR);
      const listed = ((await (await onB.call('GET', `${U}/accounts`)).json()) as { accounts: { name: string; source: string }[] }).accounts;
      expect(listed.find((x) => x.name === 'acme')).toMatchObject({ source: 'stored' });
      expect(
        (
          await operator.call('POST', `${U}/account/acme/members`, {
            email: 'shared@example.com',
            role: 'developer',
            password: 'shared-password',
          })
        ).status,
      ).toBe(201);
      const shared = await signedIn(b, { email: 'shared@example.com', password: 'shared-password' });
      expect(((await (await shared.call('GET', `${U}/auth/me`)).json()) as any).accounts).toEqual([
        { id: expect.any(Number), name: 'acme', role: 'developer' },
      ]);
      // A session made on one gateway works on the other.
      const sessionFromA = new Client(b.httpUrl);
      sessionFromA.cookie = operator.cookie;
      sessionFromA.csrf = operator.csrf;
      expect((await sessionFromA.call('GET', `${U}/auth/me`)).status).toBe(200);
    });
  });
}

suite('the embedded store', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'us-feed-'));
  return { store: { kind: 'embedded', dataDir }, cleanup: () => rmSync(dataDir, { recursive: true, force: true }) };
});

const mongo = mongoPrerequisite();
const mongoReady = requirePrerequisite('user space across gateways on MongoDB', mongo);
let server: MongoTestServer | undefined;
suite(
  'MongoDB (the MongoDB-wire server)',
  async () => {
    server ??= await startMongo();
    return { store: { kind: 'mongodb', mongodbUri: server.freshDatabaseUri() }, cleanup: () => server?.stop() };
  },
  !mongoReady,
);

describe('user space across two gateway processes on one embedded file', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'us-feed-proc-'));
  const configPath = join(dataDir, 'gateway.json');
  let a: TestGateway;
  let child: ChildProcess | undefined;
  const output: string[] = [];
  let childUrl = '';

  beforeAll(async () => {
    const input = config({ kind: 'embedded', dataDir });
    input.plugins.enabled = ['user-space', 'health'];
    writeFileSync(configPath, JSON.stringify(input));
    a = await startTestGateway(config({ kind: 'embedded', dataDir }));
    child = await startConfigGateway(configPath, output);
    childUrl = /Gateway ready: HTTP (http:\/\/[^,]+),/.exec(output.join(''))![1]!;
  }, 60_000);
  afterAll(async () => {
    await killHard(child);
    await a?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('an account created and blocked through one process reaches the other within the bound', async () => {
    const operator = await signedIn(a, OPERATOR);
    const created = await operator.call('POST', `${U}/accounts`, { name: 'beta' });
    expect(created.status).toBe(201);
    const other = new Client(childUrl);
    expect((await other.login(OPERATOR)).status).toBe(200);
    // The other process resolves `beta` only once its Directory has it (GET answers 404 before).
    await eventually(
      async () => (await other.call('GET', `${U}/accounts/beta`)).status === 200,
      BOUND_MS,
      'the account in the other process',
    );
    expect((await operator.call('PATCH', `${U}/accounts/beta`, { blocked: true, displayName: 'Beta' })).status).toBe(200);
    await eventually(
      async () => ((await (await other.call('GET', `${U}/accounts/beta`)).json()) as { blocked?: boolean }).blocked === true,
      BOUND_MS,
      'blocked in the other process',
    );
    // And the other way round: a change made in the child reaches this process.
    expect((await other.call('PATCH', `${U}/accounts/beta`, { blocked: false })).status).toBe(200);
    await eventually(() => a.gateway.directory.findAccount('beta')?.blocked === false, BOUND_MS, 'unblocked here');
  });
});
