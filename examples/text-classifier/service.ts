/**
 * The text classifier as a fittable model service (SDK handlers). `fit` learns labels from labelled
 * texts, reporting progress as it goes, and saves the model as JSON in the `modelDir` the gateway
 * gives; `predict` answers for a derived (fitted) service, whose model directory the gateway sends
 * in the `PLATFORM-FITTED-MODEL-DIR` header. Models are cached per directory.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { FITTED_MODEL_DIR_HEADER, ServiceError, type FitContext, type ModelHandlers } from '@model-gateway/sdk';
import { NaiveBayes, TrainingDataError, readConfig, readExamples, type SavedModel } from './naive-bayes.js';

/** The header naming the fitted model's directory (see docs/fitting.md). */
export { FITTED_MODEL_DIR_HEADER };
export const MODEL_FILE = 'model.json';

export interface TextClassifierOptions {
  /** How many fitted models stay loaded (least recently used ones are dropped). Default 32. */
  cacheSize?: number;
  /** Training is done in this many steps, each reported with `fitStatus`. Default 8. */
  steps?: number;
  /** Called after each progress report; a test can hold training there to watch the job. */
  afterProgress?: (percentage: number) => Promise<void> | void;
}

export function textClassifierHandlers(options: TextClassifierOptions = {}): ModelHandlers {
  const cache = new ModelCache(options.cacheSize ?? 32);
  const steps = Math.max(1, options.steps ?? 8);

  const report = async (ctx: FitContext, percentage: number) => {
    if (ctx.signal.aborted) throw ctx.signal.reason ?? new Error('fit canceled');
    ctx.progress(percentage);
    await options.afterProgress?.(percentage);
  };

  return {
    async fit(req, ctx) {
      try {
        if (!req.modelDir || !isAbsolute(req.modelDir)) throw new TrainingDataError('the gateway sent no absolute modelDir');
        const config = readConfig(req.config?.json());
        const examples = readExamples(req.trainData.text, req.targetsData?.text);
        await report(ctx, 5);
        const model =
          config.incremental && req.previousModelDir
            ? NaiveBayes.fromJSON(await loadModel(req.previousModelDir), config)
            : new NaiveBayes(config.alpha, config.lowercase);
        const size = Math.ceil(examples.length / steps);
        for (let step = 0; step < steps; step++) {
          for (const example of examples.slice(step * size, (step + 1) * size)) model.learn(example);
          await report(ctx, 5 + Math.round((85 * (step + 1)) / steps));
        }
        await saveModel(req.modelDir, model.toJSON());
        cache.set(req.modelDir, model);
        await report(ctx, 100);
        ctx.logger.info({ modelDir: req.modelDir, examples: examples.length, labels: model.labels.size }, 'text-classifier: fitted');
      } catch (err) {
        if (err instanceof TrainingDataError) throw ServiceError.badRequest(`Cannot fit the text classifier: ${err.message}`);
        throw err;
      }
    },

    async predict(req, ctx) {
      const modelDir = header(ctx.headers, FITTED_MODEL_DIR_HEADER);
      if (!modelDir)
        throw ServiceError.badRequest('The text classifier answers through a fitted (derived) service: create one, fit it, and call that');
      const model = await cache.load(modelDir);
      const input = req.data.json<{ text?: unknown; texts?: unknown }>();
      if (typeof input?.text === 'string') return model.classify(input.text);
      if (Array.isArray(input?.texts) && input.texts.every((t) => typeof t === 'string')) {
        return { predictions: (input.texts as string[]).map((t) => model.classify(t)) };
      }
      throw ServiceError.badRequest('Send {"text": "..."} or {"texts": ["...", ...]}');
    },
  };
}

function header(headers: Readonly<Record<string, string>>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

async function saveModel(modelDir: string, model: SavedModel): Promise<void> {
  await mkdir(modelDir, { recursive: true });
  const tmp = join(modelDir, `${MODEL_FILE}.${process.pid}.tmp`);
  await writeFile(tmp, JSON.stringify(model));
  await rename(tmp, join(modelDir, MODEL_FILE));
}

async function loadModel(modelDir: string): Promise<SavedModel> {
  let text: string;
  try {
    text = await readFile(join(modelDir, MODEL_FILE), 'utf8');
  } catch (err) {
    throw new ServiceError(
      'platform-action.common.processing-exception',
      `No fitted model in ${modelDir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      500,
    );
  }
  return JSON.parse(text) as SavedModel;
}

/** Loaded models by directory, least recently used dropped first; one load per directory at a time. */
class ModelCache {
  readonly #models = new Map<string, Promise<NaiveBayes>>();

  constructor(private readonly size: number) {}

  set(modelDir: string, model: NaiveBayes): void {
    this.#remember(modelDir, Promise.resolve(model));
  }

  load(modelDir: string): Promise<NaiveBayes> {
    const cached = this.#models.get(modelDir);
    if (cached) {
      this.#models.delete(modelDir);
      this.#models.set(modelDir, cached);
      return cached;
    }
    const loading = loadModel(modelDir).then((saved) => NaiveBayes.fromJSON(saved));
    loading.catch(() => this.#models.delete(modelDir));
    this.#remember(modelDir, loading);
    return loading;
  }

  #remember(modelDir: string, model: Promise<NaiveBayes>): void {
    this.#models.delete(modelDir);
    this.#models.set(modelDir, model);
    while (this.#models.size > this.size) this.#models.delete(this.#models.keys().next().value!);
  }
}
