/**
 * A multinomial naive Bayes text classifier: word counts per label, Laplace (additive) smoothing,
 * log-space scoring. Small and exact enough to show fitting end to end; no dependencies.
 */

/** The fitted model as saved to `<modelDir>/model.json`. */
export interface SavedModel {
  format: typeof MODEL_FORMAT;
  alpha: number;
  lowercase: boolean;
  documents: number;
  vocabulary: number;
  labels: Record<string, { documents: number; tokens: number; counts: Record<string, number> }>;
  trainedAt: string;
}

export const MODEL_FORMAT = 'text-classifier/naive-bayes@1';

export interface TrainingConfig {
  /** Additive smoothing; smaller values trust the counts more. Default 1. */
  alpha: number;
  /** Compare words case-insensitively. Default true. */
  lowercase: boolean;
  /** Add this dataset's counts to the previous model's (a refit that keeps what it learnt). */
  incremental: boolean;
}

export interface Example {
  text: string;
  label: string;
}

/** A problem with the training data or config; the service reports it as a bad request. */
export class TrainingDataError extends Error {
  override readonly name = 'TrainingDataError';
}

interface LabelCounts {
  documents: number;
  tokens: number;
  counts: Map<string, number>;
}

/** The model in memory. Maps, not objects: a word such as `constructor` must be just a word. */
export class NaiveBayes {
  readonly labels = new Map<string, LabelCounts>();
  documents = 0;
  readonly #vocabulary = new Set<string>();

  constructor(
    readonly alpha: number,
    readonly lowercase: boolean,
  ) {}

  get vocabulary(): number {
    return this.#vocabulary.size;
  }

  learn(example: Example): void {
    let counts = this.labels.get(example.label);
    if (!counts) this.labels.set(example.label, (counts = { documents: 0, tokens: 0, counts: new Map() }));
    counts.documents += 1;
    this.documents += 1;
    for (const token of tokenize(example.text, this.lowercase)) {
      counts.counts.set(token, (counts.counts.get(token) ?? 0) + 1);
      counts.tokens += 1;
      this.#vocabulary.add(token);
    }
  }

  /** The most likely label and the probability of every label. */
  classify(text: string): { label: string; probabilities: Record<string, number> } {
    const tokens = tokenize(text, this.lowercase);
    const v = Math.max(1, this.vocabulary);
    const scores: Array<[string, number]> = [];
    for (const [label, c] of this.labels) {
      let score = Math.log(c.documents / this.documents);
      const denominator = Math.log(c.tokens + this.alpha * v);
      for (const token of tokens) score += Math.log((c.counts.get(token) ?? 0) + this.alpha) - denominator;
      scores.push([label, score]);
    }
    const max = Math.max(...scores.map(([, s]) => s));
    const total = scores.reduce((sum, [, s]) => sum + Math.exp(s - max), 0);
    const probabilities: Record<string, number> = {};
    let best = scores[0]!;
    for (const entry of scores) {
      probabilities[entry[0]] = Math.round((Math.exp(entry[1] - max) / total) * 1e6) / 1e6;
      if (entry[1] > best[1]) best = entry;
    }
    return { label: best[0], probabilities };
  }

  toJSON(): SavedModel {
    const labels: SavedModel['labels'] = {};
    for (const [label, c] of this.labels) {
      labels[label] = { documents: c.documents, tokens: c.tokens, counts: Object.fromEntries(c.counts) };
    }
    return {
      format: MODEL_FORMAT,
      alpha: this.alpha,
      lowercase: this.lowercase,
      documents: this.documents,
      vocabulary: this.vocabulary,
      labels,
      trainedAt: new Date().toISOString(),
    };
  }

  static fromJSON(saved: SavedModel, overrides: Partial<Pick<TrainingConfig, 'alpha' | 'lowercase'>> = {}): NaiveBayes {
    if (saved?.format !== MODEL_FORMAT) throw new TrainingDataError(`not a ${MODEL_FORMAT} model`);
    const model = new NaiveBayes(overrides.alpha ?? saved.alpha, overrides.lowercase ?? saved.lowercase);
    for (const [label, c] of Object.entries(saved.labels)) {
      const counts = new Map(Object.entries(c.counts));
      model.labels.set(label, { documents: c.documents, tokens: c.tokens, counts });
      model.documents += c.documents;
      for (const token of counts.keys()) model.#vocabulary.add(token);
    }
    return model;
  }
}

const WORD = /[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu;

export function tokenize(text: string, lowercase: boolean): string[] {
  return (lowercase ? text.toLowerCase() : text).match(WORD) ?? [];
}

/** The fitting config, with defaults; unknown keys are refused so a typo does not pass silently. */
export function readConfig(config: unknown): TrainingConfig {
  const given = (config ?? {}) as Record<string, unknown>;
  if (typeof given !== 'object' || Array.isArray(given)) throw new TrainingDataError('config must be an object');
  for (const key of Object.keys(given)) {
    if (!['alpha', 'lowercase', 'incremental'].includes(key))
      throw new TrainingDataError(`unknown config key '${key}' (known: alpha, lowercase, incremental)`);
  }
  const alpha = given.alpha ?? 1;
  if (typeof alpha !== 'number' || !(alpha > 0) || !Number.isFinite(alpha))
    throw new TrainingDataError('config.alpha must be a number above 0');
  for (const flag of ['lowercase', 'incremental'] as const) {
    if (given[flag] !== undefined && typeof given[flag] !== 'boolean') throw new TrainingDataError(`config.${flag} must be true or false`);
  }
  return { alpha, lowercase: given.lowercase !== false, incremental: given.incremental === true };
}

/**
 * Labelled texts from the fit's data: either `[{text, label}, …]` as trainData, or texts
 * `["…", …]` as trainData with labels `["…", …]` as targetsData. JSON Lines (one such object per
 * line) works too.
 */
export function readExamples(trainData: string | undefined, targetsData: string | undefined): Example[] {
  if (!trainData) throw new TrainingDataError('the dataset is empty or not text');
  const items = parseItems(trainData, 'trainData');
  const targets = targetsData === undefined ? undefined : parseItems(targetsData, 'targetsData');
  if (targets && targets.length !== items.length) {
    throw new TrainingDataError(`trainData has ${items.length} texts but targetsData has ${targets.length} labels`);
  }
  const examples = items.map((item, i): Example => {
    const text = targets ? item : (item as { text?: unknown } | null)?.text;
    const label = targets ? targets[i] : (item as { label?: unknown } | null)?.label;
    if (typeof text !== 'string') throw new TrainingDataError(`example ${i}: ${targets ? 'the text' : 'text'} must be a string`);
    if (typeof label !== 'string' && typeof label !== 'number')
      throw new TrainingDataError(`example ${i}: label must be a string or a number`);
    return { text, label: String(label) };
  });
  if (new Set(examples.map((e) => e.label)).size < 2) throw new TrainingDataError('the dataset needs examples of at least two labels');
  return examples;
}

function parseItems(text: string, what: string): unknown[] {
  const trimmed = text.trim();
  try {
    if (trimmed.startsWith('[')) {
      const parsed = JSON.parse(trimmed) as unknown;
      if (Array.isArray(parsed)) return parsed;
    }
    return trimmed
      .split(/\r?\n/)
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line) as unknown);
  } catch (err) {
    throw new TrainingDataError(`${what} is neither a JSON array nor JSON Lines: ${(err as Error).message}`);
  }
}
