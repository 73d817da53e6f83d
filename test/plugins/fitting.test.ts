/**
 * Fitting through real sockets: the gateway, and the example text classifier served by the SDK over
 * real gRPC. Upload a dataset, derive a service, list fit configs, fit it (config, configId), follow
 * the job through PENDING and RUNNING with rising percentage to SUCCESS, then predict on the derived
 * service; and every refusal on the way.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GateClient, serveModel, type ModelService } from '../../sdk/index.js';
import { OTHER_ACCOUNT_KEY, READ_ONLY_KEY, TEST_KEY, eventually, startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  CLASSIFIER_ID,
  CLASSIFIER_TOKEN,
  REVIEWS,
  StepGate,
  api,
  fittingConfig,
  quiet,
  serveClassifier,
  tempDataDir,
  waitForJob,
  type Api,
  type FitSeen,
} from './fitting-support.js';

describe('fitting plugin', () => {
  let gw: TestGateway;
  let dataDir: string;
  let client: Api;
  const services: ModelService[] = [];
  const clients: GateClient[] = [];

  beforeEach(async () => {
    dataDir = tempDataDir();
    gw = await startTestGateway(fittingConfig(dataDir));
    client = api(gw);
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await Promise.all(services.splice(0).map((s) => s.stop().catch(() => undefined)));
    await gw.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const classifier = async (options: Parameters<typeof serveClassifier>[1] = {}, seen: FitSeen[] = []) => {
    const service = serveClassifier(gw, options, seen);
    services.push(service);
    await service.ready();
    return service;
  };
  const uploadReviews = async (c: Api = client, account = 'demo') =>
    (await c.post(`/account/${account}/dataset`, { name: 'reviews', description: 'film reviews', content: REVIEWS }).expect(200))
      .body as Record<string, any>;
  const derive = async (name = 'sentiment', c: Api = client) =>
    (await c.post('/account/demo/model/text-classifier/derived', { name }).expect(200)).body as Record<string, any>;
  const predict = (modelId: number, text: string, c: Api = client) =>
    c.post(`/account/demo/model/${modelId}/predict-with-config`, { data: { text } });

  it('uploads a dataset, derives a service, fits it with progress, and predicts what the data taught it', async () => {
    const steps = new StepGate();
    const seen: FitSeen[] = [];
    await classifier({ afterProgress: steps.afterProgress }, seen);

    const dataset = await uploadReviews();
    expect(dataset).toMatchObject({
      id: { accountId: 1 },
      name: 'reviews',
      datasetAccountName: 'demo',
      dataType: 'application/json',
      hasTargets: false,
      accessMode: 'private',
    });
    const datasetId = dataset.id.datasetId as number;
    expect((await client.get('/account/demo/dataset').expect(200)).body).toEqual([dataset]);

    const derived = await derive();
    expect(derived).toMatchObject({
      id: { accountId: 1 },
      name: 'sentiment',
      accountName: 'demo',
      baseService: { id: { accountId: 1, modelId: CLASSIFIER_ID }, name: 'text-classifier', accountName: 'demo' },
      fitted: false,
      fittedAt: null,
    });
    expect(typeof derived.createdAt).toBe('number');
    const modelId = derived.id.modelId as number;

    const configs = (await client.get('/account/demo/model/text-classifier/fit-config').expect(200)).body;
    expect(configs).toEqual([
      {
        id: { accountId: 1, modelId: CLASSIFIER_ID, configId: 1 },
        name: 'smooth',
        isDefault: true,
        isManual: false,
        config: '{"alpha":1}',
      },
      {
        id: { accountId: 1, modelId: CLASSIFIER_ID, configId: 2 },
        name: 'sharp',
        isDefault: false,
        isManual: false,
        config: '{"alpha":0.1}',
      },
    ]);
    // The derived service lists its base's configs too.
    expect((await client.get(`/account/demo/model/${modelId}/fit-config`).expect(200)).body).toEqual(configs);

    const early = await predict(modelId, 'lovely').expect(400);
    expect(early.body.error).toMatchObject({ code: 'SERVICE_NOT_FITTED' });

    const created = (await client.post(`/account/1/model/${modelId}/fit`, { datasetId, config: { alpha: 0.5 } }).expect(200)).body;
    expect(created).toMatchObject({
      status: 'PENDING',
      percentage: 0,
      done: false,
      error: false,
      jobType: 'FIT',
      datasetId,
      configId: null,
      config: { alpha: 0.5 },
    });
    expect(created.service).toMatchObject({ id: { accountId: 1, modelId }, name: 'sentiment' });
    // An int64 number, as the platform's API and its public SDK's client (JobStatusData) type it.
    expect(Number.isSafeInteger(created.jobId) && created.jobId > 0).toBe(true);
    const jobId = created.jobId as number;

    // Training waits after each progress report until the test has seen it in the job.
    const observed: Array<{ status: string; percentage: number }> = [];
    while (true) {
      await eventually(() => steps.held > 0, 5000, 'the next training step');
      const reported = steps.reported.at(-1)!;
      await eventually(
        async () => (await client.get(`/account/demo/job/${jobId}`)).body.percentage === reported,
        5000,
        `percentage ${reported}`,
      );
      const job = (await client.get(`/account/demo/job/${jobId}`).expect(200)).body;
      observed.push({ status: job.status, percentage: job.percentage });
      if (reported === 100) break;
      steps.step();
    }
    steps.open();
    expect(observed.every((o) => o.status === 'RUNNING')).toBe(true);
    const percentages = observed.map((o) => o.percentage);
    expect(percentages.length).toBeGreaterThanOrEqual(5);
    expect(percentages).toEqual([...percentages].sort((a, b) => a - b));
    expect(new Set(percentages).size).toBe(percentages.length);

    const finished = await waitForJob(client, 'demo', jobId);
    expect(finished).toMatchObject({ status: 'SUCCESS', state: 'SUCCESS', percentage: 100, done: true, error: false, errorMessage: null });
    expect(finished.completedAt).toBeGreaterThanOrEqual(finished.startedAt);
    expect((await client.get(`/account/demo/derived/${modelId}`).expect(200)).body).toMatchObject({ fitted: true, fittedByJobId: jobId });

    // The fit exchange: the dataset, config, where to keep the model, and who it is for.
    expect(seen).toHaveLength(1);
    const fit = seen[0]!;
    expect(fit.modelDir).toBe(join(dataDir, 'fitted', String(modelId), String(jobId)));
    expect(fit.previousModelDir).toBeUndefined();
    expect(fit.config).toEqual({ alpha: 0.5 });
    expect(JSON.parse(fit.trainData!)).toEqual(REVIEWS);
    expect(fit.targetsData).toBeUndefined();
    expect(fit.datasetInfo).toMatchObject({ accountId: 1, datasetId, name: 'reviews', type: 'application/json' });
    expect(fit.targetServiceInfo).toMatchObject({ accountId: 1, modelId, modelName: 'sentiment' });
    expect(fit.headers['PLATFORM-FIT-JOB-ID']).toBe(String(jobId));

    // Predict, over HTTP (sync predict) and over gRPC.
    const positive = await predict(modelId, 'a lovely and wonderful story').expect(200);
    expect(positive.body.label).toBe('positive');
    expect(positive.body.probabilities.positive).toBeGreaterThan(0.5);
    expect((await predict(modelId, 'boring and awful, I hated it').expect(200)).body.label).toBe('negative');
    const grpc = new GateClient({ address: gw.grpcAddress, authToken: TEST_KEY, account: 'demo', model: String(modelId) });
    clients.push(grpc);
    expect(await grpc.predictJson({ texts: ['great fun', 'terrible and dull'] })).toMatchObject({
      predictions: [{ label: 'positive' }, { label: 'negative' }],
    });
    // By name as well, like any service.
    expect(
      (await client.post('/account/demo/model/sentiment/predict-with-config', { data: { text: 'beautiful' } }).expect(200)).body.label,
    ).toBe('positive');

    // A refit with a named config: a new model directory, the previous one handed over.
    const refit = (await client.post(`/account/demo/model/sentiment/fit`, { datasetId: String(datasetId), configId: 2 }).expect(200)).body;
    expect(refit).toMatchObject({ status: 'PENDING', configId: 2, config: { alpha: 0.1 } });
    expect(await waitForJob(client, 'demo', refit.jobId)).toMatchObject({ status: 'SUCCESS', percentage: 100 });
    expect(seen[1]).toMatchObject({
      config: { alpha: 0.1 },
      previousModelDir: fit.modelDir,
      modelDir: join(dataDir, 'fitted', String(modelId), String(refit.jobId)),
    });
    expect((await client.get(`/account/demo/derived/sentiment`).expect(200)).body).toMatchObject({
      fitted: true,
      fittedByJobId: refit.jobId,
    });
    expect((await predict(modelId, 'wonderful').expect(200)).body.label).toBe('positive');

    const jobs = (await client.get('/account/demo/job').expect(200)).body as Array<{ jobId: number }>;
    expect(jobs.map((j) => j.jobId)).toEqual([refit.jobId, jobId]);
    expect(refit.jobId).toBe(jobId + 1);
    expect((await client.get('/account/demo/derived').expect(200)).body.map((d: { name: string }) => d.name)).toEqual(['sentiment']);
  });

  it('fits with the default config when neither config nor configId is given, and with texts plus targets', async () => {
    const seen: FitSeen[] = [];
    await classifier({}, seen);
    const dataset = (
      await client
        .post('/account/demo/dataset', {
          name: 'split',
          content: REVIEWS.map((r) => r.text),
          targets: REVIEWS.map((r) => r.label),
        })
        .expect(200)
    ).body;
    expect(dataset).toMatchObject({ hasTargets: true });
    const { id } = await derive();
    const job = (await client.post(`/account/demo/model/${id.modelId}/fit`, { datasetId: dataset.id.datasetId }).expect(200)).body;
    expect(job).toMatchObject({ configId: 1, config: { alpha: 1 } });
    expect(await waitForJob(client, 'demo', job.jobId)).toMatchObject({ status: 'SUCCESS' });
    expect(JSON.parse(seen[0]!.targetsData!)).toEqual(REVIEWS.map((r) => r.label));
    expect((await predict(id.modelId, 'boring').expect(200)).body.label).toBe('negative');
  });

  it("refuses bad fit requests: both config and configId, a missing dataset or config, another account's dataset", async () => {
    await classifier();
    const mine = await uploadReviews();
    const other = api(gw, OTHER_ACCOUNT_KEY);
    const theirs = await uploadReviews(other, 'other');
    const { id } = await derive();
    const fit = (body: unknown) => client.post(`/account/demo/model/${id.modelId}/fit`, body);

    const both = await fit({ datasetId: mine.id.datasetId, config: { alpha: 1 }, configId: 1 }).expect(400);
    expect(both.body.error).toMatchObject({ code: 'VALIDATION_FAILED', param: 'configId' });
    expect((await fit({ config: { alpha: 1 } }).expect(400)).body.error).toMatchObject({ code: 'VALIDATION_FAILED', param: 'datasetId' });
    const missing = await fit({ datasetId: 999999 }).expect(404);
    expect(missing.body.error).toMatchObject({ code: 'ENTITY_NOT_FOUND_BY_ID', param: 'datasetId' });
    const foreign = await fit({ datasetId: theirs.id.datasetId }).expect(403);
    expect(foreign.body.error).toMatchObject({ code: 'ACCESS_TO_ANOTHER_ACCOUNT_DENIED', param: 'datasetId' });
    expect((await fit({ datasetId: mine.id.datasetId, configId: 7 }).expect(404)).body.error).toMatchObject({
      code: 'ENTITY_NOT_FOUND_BY_ID',
      param: 'configId',
    });
    expect((await client.post('/account/demo/model/999999/fit', { datasetId: mine.id.datasetId }).expect(404)).body.error.code).toBe(
      'ENTITY_NOT_FOUND_BY_ID',
    );
    // A configured service is not a derived one.
    expect(
      (await client.post('/account/demo/model/text-classifier/fit', { datasetId: mine.id.datasetId }).expect(400)).body.error.code,
    ).toBe('SERVICE_NOT_FITTABLE');
    expect(
      (await client.post(`/account/demo/model/${id.modelId}/fit`).set('content-type', 'application/json').send('{').expect(400)).body.error
        .code,
    ).toBe('MALFORMED_JSON');
  });

  it('keeps each account to its own datasets, jobs and derived services', async () => {
    await classifier();
    const other = api(gw, OTHER_ACCOUNT_KEY);
    const dataset = await uploadReviews();
    const { id } = await derive();
    const job = (await client.post(`/account/demo/model/${id.modelId}/fit`, { datasetId: dataset.id.datasetId }).expect(200)).body;
    await waitForJob(client, 'demo', job.jobId);
    const denied = (res: { body: any }) => expect(res.body.error.code).toBe('ACCESS_TO_ANOTHER_ACCOUNT_DENIED');

    // Through the owner's account path, and through their own account path.
    denied(await other.get(`/account/demo/job/${job.jobId}`).expect(403));
    denied(await other.get(`/account/other/job/${job.jobId}`).expect(403));
    denied(await other.post(`/account/other/job/${job.jobId}/cancel`).expect(403));
    denied(await other.get('/account/demo/dataset').expect(403));
    denied(await other.get(`/account/other/dataset/${dataset.id.datasetId}`).expect(403));
    denied(await other.delete(`/account/other/dataset/${dataset.id.datasetId}`).expect(403));
    denied(await other.post(`/account/demo/model/${id.modelId}/fit`, { datasetId: 1 }).expect(403));
    denied(await other.post(`/account/other/model/${id.modelId}/fit`, { datasetId: 1 }).expect(403));
    denied(await other.get(`/account/other/derived/${id.modelId}`).expect(403));
    expect((await other.get('/account/other/job/999999').expect(404)).body.error.code).toBe('ENTITY_NOT_FOUND_BY_ID');
    expect((await other.get('/account/other/job/00000000-0000-4000-8000-000000000000').expect(404)).body.error.code).toBe(
      'ENTITY_NOT_FOUND_BY_ID',
    );
    expect((await other.get('/account/other/job/not-a-job').expect(404)).body.error.code).toBe('ENTITY_NOT_FOUND_BY_ID');
    expect((await other.get('/account/other/dataset').expect(200)).body).toEqual([]);
    // A derived service is private to its owner, also for predict.
    expect((await predict(id.modelId, 'lovely', other).expect(403)).body.error.code).toBe('ACCESS_TO_ANOTHER_ACCOUNT_NOT_PUBLIC_DENIED');
    // Deriving from a public fittable service of another account is fine; the name is theirs to choose.
    const theirs = await derive('sentiment', other);
    expect(theirs).toMatchObject({
      id: { accountId: 2 },
      name: 'sentiment',
      baseService: { id: { accountId: 1, modelId: CLASSIFIER_ID } },
    });
  });

  it('checks permissions, names and fittability', async () => {
    await classifier();
    const readOnly = api(gw, READ_ONLY_KEY);
    const required = (res: { body: any }, permission: string) =>
      expect(res.body.error).toMatchObject({ code: 'TOKEN_PERMISSION_REQUIRED', args: { permission } });
    required(await readOnly.post('/account/demo/dataset', { name: 'x', content: 'y' }).expect(403), 'MODIFY_DATA');
    required(await readOnly.post('/account/demo/model/text-classifier/derived', { name: 'x' }).expect(403), 'MODIFY_DATA');
    required(await readOnly.post('/account/demo/model/1/fit', { datasetId: 1 }).expect(403), 'MODIFY_DATA');
    await readOnly.get('/account/demo/dataset').expect(200);
    await readOnly.get('/account/demo/model/text-classifier/fit-config').expect(200);
    expect((await client.raw.get(`/api/platformgate/account/demo/dataset`).expect(401)).body.error.code).toBe('API_KEY_MISSING');

    await derive('mine');
    expect((await client.post('/account/demo/model/text-classifier/derived', { name: 'mine' }).expect(409)).body.error).toMatchObject({
      code: 'CONFLICT',
      param: 'name',
    });
    // Configured services of the account count too.
    expect((await client.post('/account/demo/model/text-classifier/derived', { name: 'echo' }).expect(409)).body.error.code).toBe(
      'CONFLICT',
    );
    expect((await client.post('/account/demo/model/text-classifier/derived', { name: '123' }).expect(400)).body.error).toMatchObject({
      code: 'VALIDATION_FAILED',
      param: 'name',
    });
    expect((await client.post('/account/demo/model/echo/derived', { name: 'x' }).expect(400)).body.error.code).toBe('SERVICE_NOT_FITTABLE');
    expect((await client.post('/account/demo/model/mine/derived', { name: 'x' }).expect(400)).body.error.code).toBe('SERVICE_NOT_FITTABLE');
    expect((await client.get('/account/demo/model/echo/fit-config').expect(400)).body.error.code).toBe('SERVICE_NOT_FITTABLE');
    expect((await client.post('/account/demo/model/nope/derived', { name: 'x' }).expect(400)).body.error.code).toBe('SERVICE_NOT_FOUND');
    // The SDKs send the name as a query parameter.
    expect((await client.post('/account/demo/model/text-classifier/derived?name=from-query').expect(200)).body.name).toBe('from-query');
    // The Java SDK's {core} prefix reaches the same routes.
    await client.raw.get('/api/platformcore/account/demo/derived').set('PLATFORM-API-KEY', TEST_KEY).expect(200);
  });

  it("a fit error fails the job with the service's message; the service stays unfitted", async () => {
    await classifier();
    const oneLabel = (
      await client
        .post('/account/demo/dataset', {
          name: 'one-label',
          content: [
            { text: 'fine', label: 'ok' },
            { text: 'good', label: 'ok' },
          ],
        })
        .expect(200)
    ).body;
    const { id } = await derive();
    const job = (await client.post(`/account/demo/model/${id.modelId}/fit`, { datasetId: oneLabel.id.datasetId }).expect(200)).body;
    const failed = await waitForJob(client, 'demo', job.jobId);
    expect(failed).toMatchObject({ status: 'FAILED', done: true, error: true, errorCode: 'platform-action.common.bad-request' });
    expect(failed.errorMessage).toContain('at least two labels');
    expect((await client.get(`/account/demo/derived/${id.modelId}`).expect(200)).body.fitted).toBe(false);
    expect((await predict(id.modelId, 'fine').expect(400)).body.error.code).toBe('SERVICE_NOT_FITTED');
  });

  it('cancels a running job (the service gets cancel), and refuses a second job while one runs', async () => {
    const steps = new StepGate();
    let aborted = false;
    const handlers = await import('../../examples/text-classifier/service.js');
    const base = handlers.textClassifierHandlers({ afterProgress: steps.afterProgress });
    const service = serveModel(
      {
        ...base,
        fit(req, ctx) {
          ctx.signal.addEventListener('abort', () => (aborted = true));
          return base.fit!(req, ctx);
        },
      },
      { descriptor: { name: 'text-classifier' }, gateways: [gw.grpcAddress], connectionToken: CLASSIFIER_TOKEN, logger: quiet },
    );
    services.push(service);
    await service.ready();
    const dataset = await uploadReviews();
    const { id } = await derive();
    const job = (await client.post(`/account/demo/model/${id.modelId}/fit`, { datasetId: dataset.id.datasetId }).expect(200)).body;
    await eventually(() => steps.held > 0, 5000, 'training to start');
    const busy = await client.post(`/account/demo/model/${id.modelId}/fit`, { datasetId: dataset.id.datasetId }).expect(409);
    expect(busy.body.error.message).toContain(`job ${job.jobId})`);
    expect((await client.delete(`/account/demo/derived/${id.modelId}`).expect(409)).body.error.code).toBe('CONFLICT');

    const canceled = (await client.post(`/account/demo/job/${job.jobId}/cancel`).expect(200)).body;
    expect(canceled).toMatchObject({ status: 'CANCELED', done: true, error: false });
    await eventually(() => aborted, 5000, 'the service to get cancel');
    steps.open();
    // Nothing the service does afterwards changes the job.
    await new Promise((r) => setTimeout(r, 100));
    expect((await client.get(`/account/demo/job/${job.jobId}`).expect(200)).body.status).toBe('CANCELED');
    expect((await client.post(`/account/demo/job/${job.jobId}/cancel`).expect(200)).body.status).toBe('CANCELED');
    // The slot is free again.
    const again = (await client.post(`/account/demo/model/${id.modelId}/fit`, { datasetId: dataset.id.datasetId }).expect(200)).body;
    expect(await waitForJob(client, 'demo', again.jobId)).toMatchObject({ status: 'SUCCESS' });
  });

  it('a service instance that disconnects mid-fit fails the job with a clear message', async () => {
    const steps = new StepGate();
    // No drain: stop() ends the stream with the fit still in flight, as a crashed process would.
    const service = serveClassifier(gw, { afterProgress: steps.afterProgress }, [], { drainTimeoutMs: 0, halfCloseTimeoutMs: 0 });
    services.push(service);
    await service.ready();
    const dataset = await uploadReviews();
    const { id } = await derive();
    const job = (await client.post(`/account/demo/model/${id.modelId}/fit`, { datasetId: dataset.id.datasetId }).expect(200)).body;
    await eventually(() => steps.held > 0, 5000, 'training to start');
    const stopping = service.stop();
    await eventually(async () => (await client.get(`/account/demo/job/${job.jobId}`)).body.done === true, 8000, 'the job to fail');
    steps.open();
    await stopping;
    const failed = (await client.get(`/account/demo/job/${job.jobId}`).expect(200)).body;
    expect(failed).toMatchObject({ status: 'FAILED', error: true });
    expect(failed).toMatchObject({
      errorCode: 'SERVICE_DISCONNECTED',
      errorMessage: "Service 'text-classifier' disconnected before answering",
    });
  });

  it('answers 400 for a fit when the base service has no instances', async () => {
    const dataset = await uploadReviews();
    const { id } = await derive();
    const res = await client.post(`/account/demo/model/${id.modelId}/fit`, { datasetId: dataset.id.datasetId }).expect(400);
    expect(res.body.error).toMatchObject({ code: 'NO_ACTIVE_INSTANCES' });
    expect((await client.get('/account/demo/job').expect(200)).body).toEqual([]);
  });

  it('uploads raw datasets, reads and deletes them, and deletes derived services', async () => {
    const text = REVIEWS.map((r) => JSON.stringify(r)).join('\n');
    const raw = (
      await client.raw
        .post('/api/platformgate/account/demo/dataset/raw?name=lines&description=jsonl')
        .set('PLATFORM-API-KEY', TEST_KEY)
        .set('content-type', 'application/x-ndjson')
        .send(text)
        .expect(200)
    ).body;
    expect(raw).toMatchObject({
      name: 'lines',
      description: 'jsonl',
      dataType: 'application/x-ndjson',
      encoding: 'text',
      size: Buffer.byteLength(text),
    });
    const binary = (
      await client.raw
        .post('/api/platformgate/account/demo/dataset/raw?name=bytes&dataType=application/octet-stream')
        .set('PLATFORM-API-KEY', TEST_KEY)
        .set('content-type', 'application/octet-stream')
        .send(Buffer.from([0xff, 0xfe, 0x00, 0x01]))
        .expect(200)
    ).body;
    expect(binary).toMatchObject({ encoding: 'binary', size: 4 });
    expect((await client.get(`/account/demo/dataset/${raw.id.datasetId}`).expect(200)).body).toEqual(raw);
    const content = await client
      .get(`/account/demo/dataset/${raw.id.datasetId}/content`)
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);
    expect((content.body as Buffer).toString()).toBe(text);
    expect(content.headers['content-type']).toContain('application/x-ndjson');
    expect((await client.get(`/account/demo/dataset/${raw.id.datasetId}/content?part=targets`).expect(404)).body.error.code).toBe(
      'ENTITY_NOT_FOUND_BY_ID',
    );
    expect(
      (await client.raw.post('/api/platformgate/account/demo/dataset/raw').set('PLATFORM-API-KEY', TEST_KEY).send('x').expect(400)).body
        .error.param,
    ).toBe('name');
    expect((await client.post('/account/demo/dataset', { name: 'empty', content: '' }).expect(400)).body.error.param).toBe('content');
    expect(
      (
        await client.raw
          .post('/api/platformgate/account/demo/dataset')
          .set('PLATFORM-API-KEY', TEST_KEY)
          .set('content-type', 'text/plain')
          .send('x')
          .expect(415)
      ).body.error.code,
    ).toBe('UNSUPPORTED_MEDIA_TYPE');

    await client.delete(`/account/demo/dataset/${raw.id.datasetId}`).expect(204);
    await client.get(`/account/demo/dataset/${raw.id.datasetId}`).expect(404);
    expect((await client.get('/account/demo/dataset').expect(200)).body.map((d: { name: string }) => d.name)).toEqual(['bytes']);

    const { id } = await derive('to-delete');
    expect(gw.gateway.directory.serviceById(id.modelId)).toBeDefined();
    await client.delete(`/account/demo/derived/to-delete`).expect(204);
    expect(gw.gateway.directory.serviceById(id.modelId)).toBeUndefined();
    await client.get(`/account/demo/derived/${id.modelId}`).expect(404);
    // The name is free again.
    await derive('to-delete');
  });
});
