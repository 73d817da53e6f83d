/**
 * Issue 15 item 3 on MongoDB: the per-account storage quota counts datasets (fitting's store) and
 * async task bodies and results (the task store's aggregation) as kept in MongoDB, refuses what
 * would go past it with 413 STORAGE_QUOTA_EXCEEDED, and leaves other accounts storing on.
 */
import { rmSync } from 'node:fs';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTHER_ACCOUNT_KEY, TEST_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { tempDataDir } from '../plugins/fitting-support.js';

const QUOTA = 1024 * 1024;
const GATE = '/api/platformgate';

describe.skipIf(!requirePrerequisite('storage quota on MongoDB', mongoPrerequisite()))('storage quota on MongoDB', () => {
  let mongo: MongoTestServer;
  let gw: TestGateway;
  let dataDir: string;

  beforeAll(async () => {
    mongo = await startMongo();
    dataDir = tempDataDir();
    gw = await startTestGateway(
      testConfigInput({
        store: { kind: 'mongodb', mongodbUri: mongo.freshDatabaseUri(), dataDir },
        plugins: { enabled: ['async-predict', 'fitting'], options: { 'async-predict': { acceptWithoutInstances: true } } },
        limits: { storageBytesPerAccount: QUOTA },
      }),
    );
  });
  afterAll(async () => {
    await gw?.close();
    await mongo?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const upload = (account: string, key: string, bytes: number) =>
    request(gw.httpUrl)
      .post(`${GATE}/account/${account}/dataset/raw`)
      .query({ name: `d${bytes}` })
      .set('PLATFORM-API-KEY', key)
      .set('Content-Type', 'text/plain')
      .send('z'.repeat(bytes));

  it('counts datasets and async tasks kept in MongoDB and refuses past the quota', async () => {
    const first = await upload('demo', TEST_KEY, 600 * 1024).expect(200);
    await request(gw.httpUrl)
      .post('/api/platformgateway/account/demo/model/echo/async/predict')
      .set('PLATFORM-API-KEY', TEST_KEY)
      .set('Content-Type', 'application/json')
      .send(`{"pad":"${'p'.repeat(300 * 1024)}"}`)
      .expect(200);
    expect(await gw.gateway.pipeline.storedBytes(1)).toBeGreaterThan(900 * 1024);
    const refused = await upload('demo', TEST_KEY, 200 * 1024).expect(413);
    expect(refused.body.error).toMatchObject({ code: 'STORAGE_QUOTA_EXCEEDED' });
    const task = await request(gw.httpUrl)
      .post('/api/platformgateway/account/demo/model/echo/async/predict')
      .set('PLATFORM-API-KEY', TEST_KEY)
      .set('Content-Type', 'application/json')
      .send(`{"pad":"${'p'.repeat(200 * 1024)}"}`)
      .expect(413);
    expect(task.body.error.code).toBe('STORAGE_QUOTA_EXCEEDED');
    expect(await gw.gateway.pipeline.storedBytes(1)).toBeLessThanOrEqual(QUOTA);
    await upload('other', OTHER_ACCOUNT_KEY, 600 * 1024).expect(200);
    await request(gw.httpUrl)
      .delete(`${GATE}/account/demo/dataset/${first.body.id.datasetId}`)
      .set('PLATFORM-API-KEY', TEST_KEY)
      .expect(204);
    await upload('demo', TEST_KEY, 200 * 1024).expect(200);
  });
});
