/**
 * Fitting state in MongoDB survives a gateway restart: the finished job, the dataset and the fitted
 * derived service (registered again at boot, so predict works on the new gateway); a job the old
 * gateway was running when it stopped reads FAILED (FITTING_INTERRUPTED), whether it stopped
 * gracefully or its lease simply ran out.
 */
import { rmSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openMongoConnection } from '../../core/tasks/mongo-connection.js';
import { MongoDocStore } from '../../core/storage/mongo-docs.js';
import { DocFittingStore } from '../../plugins/fitting/store/doc-fitting-store.js';
import type { ModelService } from '../../sdk/index.js';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { StepGate, api, fittingConfig, REVIEWS, serveClassifier, tempDataDir, waitForJob } from './fitting-support.js';

describe.skipIf(!requirePrerequisite('fitting with MongoDB', mongoPrerequisite()))('fitting with MongoDB', () => {
  let mongo: MongoTestServer;
  let dataDir: string;
  const gateways: TestGateway[] = [];
  const services: ModelService[] = [];

  beforeAll(async () => {
    mongo = await startMongo();
  });
  afterAll(async () => {
    await mongo?.stop();
  });
  afterEach(async () => {
    await Promise.all(services.splice(0).map((s) => s.stop().catch(() => undefined)));
    for (const gw of gateways.splice(0)) await gw.close().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const boot = async (uri: string, fitting: Record<string, unknown> = {}) => {
    const gw = await startTestGateway(
      fittingConfig(
        dataDir,
        {
          store: { kind: 'mongodb', mongodbUri: uri, dataDir },
          gate: { heartbeatIntervalMs: 200, defaultTimeoutSec: 10, drainTimeoutMs: 200 },
        },
        { leaseMs: 500, ...fitting },
      ),
    );
    gateways.push(gw);
    return gw;
  };
  const classifier = async (gw: TestGateway, steps?: StepGate) => {
    const service = serveClassifier(gw, steps ? { afterProgress: steps.afterProgress } : {});
    services.push(service);
    await service.ready();
    return service;
  };

  it('keeps jobs, datasets and fitted services across a restart, and fails the job the restart interrupted', async () => {
    dataDir = tempDataDir();
    const uri = mongo.freshDatabaseUri();
    const first = await boot(uri);
    await classifier(first);
    let client = api(first);
    const dataset = (await client.post('/account/demo/dataset', { name: 'reviews', content: REVIEWS }).expect(200)).body;
    const derived = (await client.post('/account/demo/model/text-classifier/derived', { name: 'sentiment' }).expect(200)).body;
    const modelId = derived.id.modelId as number;
    const done = (await client.post(`/account/demo/model/${modelId}/fit`, { datasetId: dataset.id.datasetId }).expect(200)).body;
    expect(await waitForJob(client, 'demo', done.jobId)).toMatchObject({ status: 'SUCCESS' });

    // A second fit is under way when the gateway stops.
    const steps = new StepGate();
    await services.pop()!.stop();
    await classifier(first, steps);
    const interrupted = (
      await client.post(`/account/demo/model/${modelId}/fit`, { datasetId: dataset.id.datasetId, configId: 2 }).expect(200)
    ).body;
    await eventually(() => steps.held > 0, 5000, 'the second fit to start');
    await gateways.pop()!.close();
    steps.open();
    await Promise.all(services.splice(0).map((s) => s.stop()));

    const second = await boot(uri);
    await classifier(second);
    client = api(second);
    expect((await client.get(`/account/demo/job/${done.jobId}`).expect(200)).body).toMatchObject({
      status: 'SUCCESS',
      percentage: 100,
      done: true,
    });
    const failed = (await client.get(`/account/demo/job/${interrupted.jobId}`).expect(200)).body;
    expect(failed).toMatchObject({ status: 'FAILED', errorCode: 'FITTING_INTERRUPTED' });
    expect(failed.errorMessage).toContain('start the fit again');
    expect((await client.get('/account/demo/dataset').expect(200)).body).toEqual([dataset]);
    expect((await client.get(`/account/demo/derived/${modelId}`).expect(200)).body).toMatchObject({
      name: 'sentiment',
      fitted: true,
      fittedByJobId: done.jobId,
    });
    // Registered again at boot: predict reaches the fitted model the first gateway's fit saved.
    const answer = await client
      .post(`/account/demo/model/${modelId}/predict-with-config`, { data: { text: 'lovely and wonderful' } })
      .expect(200);
    expect(answer.body.label).toBe('positive');
    // New IDs continue the sequences.
    const next = (await client.post('/account/demo/model/text-classifier/derived', { name: 'second' }).expect(200)).body;
    expect(next.id.modelId).toBe(modelId + 1);
  });

  it('fails a job whose gateway vanished without a word, once its lease runs out', async () => {
    dataDir = tempDataDir();
    const uri = mongo.freshDatabaseUri();
    // What a gateway that crashed mid-fit leaves behind: a RUNNING job it no longer renews.
    const connection = await openMongoConnection(uri);
    const store = await DocFittingStore.open({ docs: new MongoDocStore(connection) });
    await store.createDerived({ id: 100_000, accountId: 1, name: 'orphan', description: '', baseServiceId: 20 });
    const crashed = {
      jobId: 7_000_001,
      accountId: 1,
      serviceId: 100_000,
      baseServiceId: 20,
      datasetId: 1,
      configId: null,
      config: null,
      modelDir: '/nowhere',
      previousModelDir: null,
      runnerId: 'gone',
      leaseMs: 60_000,
    };
    await store.createJob(crashed);
    await store.startJob(crashed.jobId, 'gone', 300);
    await connection.close();

    const gw = await boot(uri);
    const client = api(gw);
    expect((await client.get(`/account/demo/derived/orphan`).expect(200)).body).toMatchObject({ fitted: false });
    const failed = await waitForJob(client, 'demo', crashed.jobId, 5000);
    expect(failed).toMatchObject({ status: 'FAILED', errorCode: 'FITTING_INTERRUPTED' });
  });

  it('two gateways on one database: one fits, the other picks the fitted service up and serves it', async () => {
    dataDir = tempDataDir();
    const uri = mongo.freshDatabaseUri();
    const [a, b] = [await boot(uri, { syncIntervalMs: 100 }), await boot(uri, { syncIntervalMs: 100 })];
    const steps = new StepGate();
    await classifier(a, steps);
    await classifier(b, steps);
    const [clientA, clientB] = [api(a), api(b)];
    const dataset = (await clientA.post('/account/demo/dataset', { name: 'reviews', content: REVIEWS }).expect(200)).body;
    const { id } = (await clientA.post('/account/demo/model/text-classifier/derived', { name: 'shared' }).expect(200)).body;
    // The name is taken on every gateway at once.
    expect((await clientB.post('/account/demo/model/text-classifier/derived', { name: 'shared' }).expect(409)).body.error.code).toBe(
      'CONFLICT',
    );
    const job = (await clientA.post(`/account/demo/model/${id.modelId}/fit`, { datasetId: dataset.id.datasetId }).expect(200)).body;
    await eventually(() => steps.held > 0, 5000, 'the fit to start');
    // One job per service, whichever gateway is asked; the job reads the same through either.
    expect(
      (await clientB.post(`/account/demo/model/${id.modelId}/fit`, { datasetId: dataset.id.datasetId }).expect(409)).body.error.message,
    ).toContain(`job ${job.jobId})`);
    expect((await clientB.get(`/account/demo/job/${job.jobId}`).expect(200)).body.status).toBe('RUNNING');
    steps.open();
    await waitForJob(clientB, 'demo', job.jobId);
    await eventually(
      async () => (await clientB.post(`/account/demo/model/${id.modelId}/predict-with-config`, { data: { text: 'awful' } })).status === 200,
      5000,
      'gateway B to serve the fitted service',
    );
    expect(
      (await clientB.post(`/account/demo/model/shared/predict-with-config`, { data: { text: 'awful and boring' } }).expect(200)).body.label,
    ).toBe('negative');
  });
});
