/**
 * Durability on the embedded store (the default: no store in the config, so SQLite under `.data` next
 * to it) and on MongoDB: a real gateway process (`node --import tsx core/bin/start.ts`, as `npm start`
 * runs it) is killed with SIGKILL while tasks are queued and running, and started again on the same
 * ports. The model service (here, in the test process) reconnects to it, and every accepted task ends
 * COMPLETED exactly once as the caller sees it, each with its own result; none is lost.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_TOKEN, TEST_KEY, eventually } from '../support/gateway.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { ScriptedService } from '../support/scripted-service.js';
import { killHard, startConfigGateway } from '../support/config-gateway.js';
import { freePort } from '../support/ports.js';

const P = '/api/platformgateway/account/demo';
const CREATE = `${P}/model/echo/async/predict-with-config`;
const TASKS = 16;

durabilitySuite('embedded');
describe.skipIf(!requirePrerequisite('async-predict durability (MongoDB)', mongoPrerequisite()))('on MongoDB', () => {
  durabilitySuite('mongodb');
});

function durabilitySuite(home: 'embedded' | 'mongodb'): void {
  describe(`async-predict durability (${home} store): gateway killed with SIGKILL`, () => {
    let mongo: MongoTestServer | undefined;
    let dir: string;
    let configPath: string;
    let mongodbUri: string | undefined;
    let httpUrl: string;
    let grpcAddress: string;
    let gateway: ChildProcess | undefined;
    let service: ScriptedService | undefined;
    const output: string[] = [];

    /** Starts the gateway process and resolves once it printed that it is ready. */
    beforeAll(async () => {
      if (home === 'mongodb') {
        mongo = await startMongo();
        mongodbUri = mongo.freshDatabaseUri();
      }
      dir = await mkdtemp(join(tmpdir(), 'gw-durability-'));
      configPath = join(dir, 'gateway.json');
      const [httpPort, grpcPort] = [await freePort(), await freePort()];
      httpUrl = `http://127.0.0.1:${httpPort}`;
      grpcAddress = `127.0.0.1:${grpcPort}`;
      await writeFile(
        configPath,
        JSON.stringify({
          server: { host: '127.0.0.1', httpPort, grpcPort },
          gate: { heartbeatIntervalMs: 200 },
          ...(mongodbUri ? { store: { kind: 'mongodb', mongodbUri } } : {}),
          accounts: [{ id: 1, name: 'demo', requestsPerSecond: 1000 }],
          apiKeys: [{ name: 'all', account: 'demo', key: TEST_KEY, permissions: ['MODEL_REQUESTS', 'READ_DATA', 'MODIFY_DATA'] }],
          services: [{ id: 10, name: 'echo', account: 'demo', public: true, connectionTokens: [{ token: ECHO_TOKEN }] }],
          plugins: { enabled: ['async-predict'], options: { 'async-predict': { leaseMs: 1_500, pollMs: 100, concurrency: 4 } } },
        }),
      );
    });
    afterAll(async () => {
      service?.close();
      await killHard(gateway);
      await mongo?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('completes every accepted task exactly once, each with its own result, across a SIGKILL and a restart', async () => {
      gateway = await startConfigGateway(configPath, output, mongodbUri);
      service = new ScriptedService(grpcAddress, ECHO_TOKEN, { reconnect: true, answerDelayMs: 1_000 });
      await service.ready();

      const http = () => request(httpUrl);
      const ids: string[] = [];
      for (let i = 0; i < TASKS; i++) {
        const res = await http()
          .post(CREATE)
          .set('PLATFORM-API-KEY', TEST_KEY)
          .send({ data: { echo: `task-${i}` } });
        expect(res.status, res.text).toBe(200);
        ids.push(res.body as string);
      }
      const statuses = async () =>
        Promise.all(
          ids.map(async (id) => (await http().get(`${P}/async/task/${id}`).set('PLATFORM-API-KEY', TEST_KEY)).body.status as string),
        );

      // The first four answer after a second; kill while they run and the other twelve wait.
      await service.until(() => service!.received.length >= 4, 10_000, 'four dispatched tasks');
      const before = await statuses();
      expect(before.filter((s) => s === 'PROCESSING').length).toBeGreaterThan(0);
      expect(before.filter((s) => s === 'QUEUED').length).toBeGreaterThan(0);
      await killHard(gateway);
      const connectionsBefore = service.connections;

      gateway = await startConfigGateway(configPath, output, mongodbUri);
      await service.until(() => service!.connections > connectionsBefore, 15_000, 'the service to reconnect');
      await eventually(async () => (await statuses()).every((s) => s === 'COMPLETED' || s === 'CANCELED'), 60_000, 'every task to finish');

      expect(await statuses()).toEqual(ids.map(() => 'COMPLETED'));
      for (const [i, id] of ids.entries()) {
        const res = await http().get(`${P}/async/task/${id}/response`).set('PLATFORM-API-KEY', TEST_KEY);
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ echo: `task-${i}` });
      }
      // At least once towards the service: the tasks running at the kill were sent again after it.
      const sent = new Map<string, number>();
      for (const r of service.received) sent.set(r.headers['Z-requestId']!, (sent.get(r.headers['Z-requestId']!) ?? 0) + 1);
      expect([...sent.keys()].sort()).toEqual([...ids].sort());
      expect([...sent.values()].filter((n) => n > 1).length).toBeGreaterThan(0);
    }, 120_000);
  });
}
