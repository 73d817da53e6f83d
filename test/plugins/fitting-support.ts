/** Shared by the fitting tests: a gateway config with the example classifier, data, and HTTP helpers. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { textClassifierHandlers, type TextClassifierOptions } from '../../examples/text-classifier/service.js';
import { serveModel, type FitRequest, type ModelHandlers, type ModelService, type ModelServiceOptions } from '../../sdk/index.js';
import { TEST_KEY, eventually, testConfigInput, type TestGateway } from '../support/gateway.js';

export const CLASSIFIER_TOKEN = 'classifier-service-token-01';
export const CLASSIFIER_ID = 20;
export const API = '/api/platformgate';
export const quiet = { debug() {}, info() {}, warn() {}, error() {} };

export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'gw-fitting-'));
}

/** The test config plus a public fittable text classifier (ID 20) and the fitting plugin. */
export function fittingConfig(
  dataDir: string,
  overrides: Record<string, unknown> = {},
  fittingOptions: Record<string, unknown> = {},
): Record<string, any> {
  const base = testConfigInput();
  return testConfigInput({
    services: [
      ...base.services,
      {
        id: CLASSIFIER_ID,
        name: 'text-classifier',
        account: 'demo',
        public: true,
        fittable: true,
        connectionTokens: [{ token: CLASSIFIER_TOKEN }],
        fitConfigs: [
          { id: 1, name: 'smooth', default: true, config: { alpha: 1 } },
          { id: 2, name: 'sharp', config: { alpha: 0.1 } },
        ],
      },
    ],
    store: { kind: 'memory', dataDir },
    plugins: { enabled: ['fitting', 'sync-predict'], options: { fitting: fittingOptions } },
    ...overrides,
  });
}

/** Labelled reviews: what the classifier should learn. */
export const REVIEWS = [
  { text: 'What a wonderful, lovely film. I loved every minute', label: 'positive' },
  { text: 'Great acting and a beautiful story', label: 'positive' },
  { text: 'Brilliant, delightful and funny', label: 'positive' },
  { text: 'I enjoyed it, a great and happy evening', label: 'positive' },
  { text: 'Lovely music, wonderful cast, great fun', label: 'positive' },
  { text: 'Superb and moving, a beautiful experience', label: 'positive' },
  { text: 'Terrible plot and awful acting', label: 'negative' },
  { text: 'Boring, dull and far too long. I hated it', label: 'negative' },
  { text: 'An awful waste of time, terrible', label: 'negative' },
  { text: 'Bad script, bad jokes, a dull mess', label: 'negative' },
  { text: 'I hated the ending; boring and stupid', label: 'negative' },
  { text: 'Horrible sound and a terrible, boring story', label: 'negative' },
];

/** What the classifier's fit handler was sent, per call. */
export interface FitSeen {
  modelDir: string;
  previousModelDir: string | undefined;
  config: unknown;
  datasetInfo: FitRequest['datasetInfo'];
  targetServiceInfo: FitRequest['targetServiceInfo'];
  trainData: string | undefined;
  targetsData: string | undefined;
  headers: Record<string, string>;
}

/** The example classifier served over the SDK in this process, recording what `fit` receives. */
export function serveClassifier(
  gw: TestGateway,
  options: TextClassifierOptions = {},
  seen: FitSeen[] = [],
  sdk: Partial<ModelServiceOptions> = {},
): ModelService {
  const handlers = textClassifierHandlers(options);
  const recording: ModelHandlers = {
    ...handlers,
    fit(req, ctx) {
      seen.push({
        modelDir: req.modelDir,
        previousModelDir: req.previousModelDir,
        config: req.config?.json(),
        datasetInfo: req.datasetInfo,
        targetServiceInfo: req.targetServiceInfo,
        trainData: req.trainData.text,
        targetsData: req.targetsData?.text,
        headers: { ...ctx.headers },
      });
      return handlers.fit!(req, ctx);
    },
  };
  return serveModel(recording, {
    descriptor: { name: 'text-classifier', fittable: true },
    gateways: [gw.grpcAddress],
    connectionToken: CLASSIFIER_TOKEN,
    logger: quiet,
    backoff: { initialMs: 20, maxMs: 100 },
    ...sdk,
  });
}

/** A supertest agent bound to the gateway with an API key. */
export function api(gw: TestGateway, key = TEST_KEY) {
  const agent = request(gw.gateway.app.callback());
  return {
    get: (path: string) => agent.get(`${API}${path}`).set('PLATFORM-API-KEY', key),
    post: (path: string, body?: unknown) => {
      const req = agent.post(`${API}${path}`).set('PLATFORM-API-KEY', key);
      return body === undefined ? req : req.send(body as object);
    },
    delete: (path: string) => agent.delete(`${API}${path}`).set('PLATFORM-API-KEY', key),
    raw: agent,
  };
}

export type Api = ReturnType<typeof api>;

/** Polls the job until `done`; returns the final record. */
export async function waitForJob(client: Api, account: string, jobId: number, timeoutMs = 10_000): Promise<Record<string, any>> {
  let job: Record<string, any> = {};
  await eventually(
    async () => {
      job = (await client.get(`/account/${account}/job/${jobId}`).expect(200)).body as Record<string, any>;
      return job.done === true;
    },
    timeoutMs,
    `job ${jobId} to finish`,
  );
  return job;
}

/** A release valve for `afterProgress`: training waits at each step until the test lets it go on. */
export class StepGate {
  readonly reported: number[] = [];
  #waiting: Array<() => void> = [];
  #open = false;

  readonly afterProgress = (percentage: number): Promise<void> => {
    this.reported.push(percentage);
    if (this.#open) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  };

  get held(): number {
    return this.#waiting.length;
  }

  /** Lets the held step go on. */
  step(): void {
    this.#waiting.shift()?.();
  }

  /** Lets training run freely from now on. */
  open(): void {
    this.#open = true;
    for (const release of this.#waiting.splice(0)) release();
  }

  close(): void {
    this.#open = false;
  }
}
