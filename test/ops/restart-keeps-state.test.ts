/**
 * Issue 27, "Done when": a gateway on the default store (embedded: no store in the config, so SQLite
 * under `.data` next to it) keeps its async tasks, datasets, fitting jobs, stored Responses and usage
 * across `kill -9`. A real gateway process (`node --import tsx core/bin/start.ts`, as `npm start` runs
 * it) with async-predict, fitting, chatapi and usage gets one of each through its HTTP API, is killed
 * with SIGKILL, and is started again on the same config: each is still there with the same content,
 * and the stored Response still continues a conversation as `previous_response_id`.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoService } from '../../examples/echo-service/service.js';
import { textClassifierHandlers } from '../../examples/text-classifier/service.js';
import { serveModel, type ModelService } from '../../sdk/index.js';
import { CLASSIFIER_ID, CLASSIFIER_TOKEN, REVIEWS, quiet } from '../plugins/fitting-support.js';
import { ECHO_TOKEN, TEST_KEY, eventually } from '../support/gateway.js';
import { killHard, startConfigGateway } from '../support/config-gateway.js';
import { freePort } from '../support/ports.js';

const GATEWAY = '/api/platformgateway/account/demo';
const FITTING = '/api/platformgate/account/demo';

describe('a gateway on the embedded store killed with SIGKILL and started again', () => {
  let dir: string;
  let configPath: string;
  let httpUrl: string;
  let grpcAddress: string;
  let gateway: ChildProcess | undefined;
  const services: ModelService[] = [];
  const output: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-restart-'));
    configPath = join(dir, 'gateway.json');
    const [httpPort, grpcPort] = [await freePort(), await freePort()];
    httpUrl = `http://127.0.0.1:${httpPort}`;
    grpcAddress = `127.0.0.1:${grpcPort}`;
    await writeFile(
      configPath,
      JSON.stringify({
        server: { host: '127.0.0.1', httpPort, grpcPort },
        gate: { heartbeatIntervalMs: 200 },
        // No `store`: the default, the embedded store under `.data` next to this file.
        accounts: [{ id: 1, name: 'demo', requestsPerSecond: 1000 }],
        apiKeys: [{ name: 'all', account: 'demo', key: TEST_KEY, permissions: ['MODEL_REQUESTS', 'READ_DATA', 'MODIFY_DATA'] }],
        services: [
          { id: 10, name: 'echo', account: 'demo', public: true, family: 'openai', connectionTokens: [{ token: ECHO_TOKEN }] },
          {
            id: CLASSIFIER_ID,
            name: 'text-classifier',
            account: 'demo',
            public: true,
            fittable: true,
            connectionTokens: [{ token: CLASSIFIER_TOKEN }],
            fitConfigs: [{ id: 1, name: 'smooth', default: true, config: { alpha: 1 } }],
          },
        ],
        plugins: {
          enabled: ['async-predict', 'fitting', 'chatapi', 'usage'],
          options: { 'async-predict': { pollMs: 100 }, usage: { flushIntervalMs: 100 } },
        },
      }),
    );
  });
  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop().catch(() => undefined)));
    await killHard(gateway);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('keeps the async task, dataset, fitting job, stored Response and usage, each with the same content', async () => {
    gateway = await startConfigGateway(configPath, output);
    const backoff = { initialMs: 50, maxMs: 200 };
    const echo = startEchoService({ gateways: grpcAddress, connectionToken: ECHO_TOKEN, logger: quiet, backoff });
    const classifier = serveModel(textClassifierHandlers(), {
      descriptor: { name: 'text-classifier', fittable: true },
      gateways: [grpcAddress],
      connectionToken: CLASSIFIER_TOKEN,
      logger: quiet,
      backoff,
    });
    services.push(echo, classifier);
    await Promise.all([echo.ready(), classifier.ready()]);

    const get = (path: string) => request(httpUrl).get(path).set('PLATFORM-API-KEY', TEST_KEY);
    const post = (path: string, body: object) => request(httpUrl).post(path).set('PLATFORM-API-KEY', TEST_KEY).send(body);
    const openai = new OpenAI({ apiKey: TEST_KEY, baseURL: `${httpUrl}/api/adapters/chatapi/v1`, maxRetries: 0 });

    // An async task, completed, its result readable.
    const created = await post(`${GATEWAY}/model/echo/async/predict-with-config`, {
      data: { messages: [{ role: 'user', content: 'async before the crash' }] },
    });
    expect(created.status, created.text).toBe(200);
    const taskId = created.body as string;
    await eventually(
      async () => (await get(`${GATEWAY}/async/task/${taskId}`)).body.status === 'COMPLETED',
      10_000,
      'the async task to complete',
    );
    const result = await get(`${GATEWAY}/async/task/${taskId}/response`).expect(200);
    expect(JSON.stringify(result.body)).toContain('Echo: async before the crash');

    // A dataset, a derived service fitted on it, the job finished.
    const dataset = (await post(`${FITTING}/dataset`, { name: 'reviews', content: REVIEWS }).expect(200)).body as {
      id: { datasetId: number };
    };
    const derived = (await post(`${FITTING}/model/text-classifier/derived`, { name: 'sentiment' }).expect(200)).body as {
      id: { modelId: number };
    };
    const job = (await post(`${FITTING}/model/${derived.id.modelId}/fit`, { datasetId: dataset.id.datasetId }).expect(200)).body as {
      jobId: number;
    };
    await eventually(async () => (await get(`${FITTING}/job/${job.jobId}`)).body.done === true, 10_000, 'the fitting job to finish');
    const finishedJob = (await get(`${FITTING}/job/${job.jobId}`).expect(200)).body as Record<string, unknown>;
    expect(finishedJob).toMatchObject({ status: 'SUCCESS', percentage: 100 });

    // A stored Response (store is on unless the request says otherwise).
    const stored = await openai.responses.create({ model: 'demo/echo', input: 'kept across a crash', store: true });
    expect(stored.output_text).toBe('Echo: kept across a crash');

    // Usage last, so nothing counted after it: GET usage flushes the counts to the store before it reads.
    const usageBefore = (await get(`${GATEWAY}/usage`).expect(200)).body as {
      totals: { requests: number; inputTokens: number; outputTokens: number };
    };
    // At least the Response's request and its tokens ('kept across a crash', 'Echo: kept across a crash').
    expect(usageBefore.totals.requests).toBeGreaterThanOrEqual(1);
    expect(usageBefore.totals.inputTokens).toBeGreaterThanOrEqual(4);
    expect(usageBefore.totals.outputTokens).toBeGreaterThanOrEqual(5);

    const [datasetsBefore, jobsBefore, derivedBefore] = await Promise.all([
      get(`${FITTING}/dataset`),
      get(`${FITTING}/job`),
      get(`${FITTING}/derived`),
    ]);

    await killHard(gateway);
    await eventually(() => echo.connectedGateways().length === 0, 10_000, 'the echo service to see the gateway gone');
    gateway = await startConfigGateway(configPath, output);

    // Usage first, before anything after the restart could count.
    expect((await get(`${GATEWAY}/usage`).expect(200)).body).toEqual(usageBefore);

    const task = await get(`${GATEWAY}/async/task/${taskId}`).expect(200);
    expect(task.body.status).toBe('COMPLETED');
    expect((await get(`${GATEWAY}/async/task/${taskId}/response`).expect(200)).body).toEqual(result.body);

    expect((await get(`${FITTING}/dataset`).expect(200)).body).toEqual(datasetsBefore.body);
    expect((datasetsBefore.body as Array<{ id: { datasetId: number } }>).map((d) => d.id.datasetId)).toEqual([dataset.id.datasetId]);
    expect((await get(`${FITTING}/dataset/${dataset.id.datasetId}/content`).expect(200)).body).toEqual(REVIEWS);
    expect((await get(`${FITTING}/job`).expect(200)).body).toEqual(jobsBefore.body);
    expect((jobsBefore.body as Array<{ jobId: number }>).map((j) => j.jobId)).toEqual([job.jobId]);
    expect((await get(`${FITTING}/job/${job.jobId}`).expect(200)).body).toEqual(finishedJob);
    expect((await get(`${FITTING}/derived`).expect(200)).body).toEqual(derivedBefore.body);

    const retrieved = await openai.responses.retrieve(stored.id);
    expect(retrieved.id).toBe(stored.id);
    expect(retrieved.output_text).toBe(stored.output_text);
    await eventually(() => echo.connectedGateways().length === 1, 15_000, 'the echo service to reconnect');
    const next = await openai.responses.create({ model: 'demo/echo', input: 'and continued', previous_response_id: stored.id });
    // The echo counts the words of the whole conversation: 'kept across a crash', 'Echo: kept across a crash', 'and continued'.
    expect(next.usage?.input_tokens).toBe(4 + 5 + 2);
  }, 60_000);
});
