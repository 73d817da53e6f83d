/** The example classifier's model on its own: reading data and config, learning, scoring, saving. */
import { describe, expect, it } from 'vitest';
import { NaiveBayes, TrainingDataError, readConfig, readExamples, tokenize } from '../../examples/text-classifier/naive-bayes.js';
import { REVIEWS } from '../plugins/fitting-support.js';

const trained = (examples = REVIEWS, alpha = 1) => {
  const model = new NaiveBayes(alpha, true);
  for (const example of examples) model.learn(example);
  return model;
};

describe('text classifier (naive Bayes)', () => {
  it('tokenizes words, case-insensitively by default', () => {
    expect(tokenize("Don't STOP, café-au-lait 42!", true)).toEqual(["don't", 'stop', 'café', 'au', 'lait', '42']);
    expect(tokenize('Hello hello', false)).toEqual(['Hello', 'hello']);
  });

  it('learns labels and predicts them with probabilities that sum to 1', () => {
    const model = trained();
    const positive = model.classify('a wonderful and lovely evening');
    expect(positive.label).toBe('positive');
    expect(positive.probabilities.positive! + positive.probabilities.negative!).toBeCloseTo(1, 5);
    expect(model.classify('dull, boring, terrible').label).toBe('negative');
    // Unknown words leave the priors (equal here) in charge, without failing.
    expect(Object.keys(model.classify('zzz qqq').probabilities).sort()).toEqual(['negative', 'positive']);
  });

  it('treats words like __proto__ and constructor as words', () => {
    const model = trained([
      { text: '__proto__ constructor', label: 'odd' },
      { text: 'plain words here', label: 'plain' },
    ]);
    expect(model.classify('constructor __proto__').label).toBe('odd');
    const copy = NaiveBayes.fromJSON(JSON.parse(JSON.stringify(model.toJSON())));
    expect(copy.classify('constructor __proto__').label).toBe('odd');
    expect(copy.vocabulary).toBe(model.vocabulary);
  });

  it('round-trips through its saved JSON form', () => {
    const model = trained();
    const copy = NaiveBayes.fromJSON(JSON.parse(JSON.stringify(model.toJSON())));
    for (const text of ['lovely story', 'awful plot', 'a film']) expect(copy.classify(text)).toEqual(model.classify(text));
  });

  it('reads [{text,label}] arrays, JSON Lines, and texts with separate targets', () => {
    expect(readExamples(JSON.stringify(REVIEWS), undefined)).toHaveLength(REVIEWS.length);
    expect(readExamples(REVIEWS.map((r) => JSON.stringify(r)).join('\n'), undefined)).toHaveLength(REVIEWS.length);
    const split = readExamples(JSON.stringify(REVIEWS.map((r) => r.text)), JSON.stringify(REVIEWS.map((r) => r.label)));
    expect(split[0]).toEqual(REVIEWS[0]);
  });

  it('explains what is wrong with bad data and config', () => {
    const bad = (f: () => unknown) => expect(f).toThrow(TrainingDataError);
    bad(() => readExamples('not json', undefined));
    bad(() => readExamples('[{"text": "x", "label": "a"}]', undefined));
    bad(() => readExamples('[{"text": 1, "label": "a"}, {"text": "y", "label": "b"}]', undefined));
    bad(() => readExamples('["a", "b"]', '["x"]'));
    bad(() => readExamples(undefined, undefined));
    expect(readConfig(undefined)).toEqual({ alpha: 1, lowercase: true, incremental: false });
    expect(readConfig({ alpha: 0.1, lowercase: false, incremental: true })).toEqual({ alpha: 0.1, lowercase: false, incremental: true });
    bad(() => readConfig({ alpha: 0 }));
    bad(() => readConfig({ alpah: 1 }));
    bad(() => readConfig({ lowercase: 'yes' }));
  });
});
