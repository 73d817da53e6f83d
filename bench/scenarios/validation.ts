/**
 * Scenario 7: microseconds per request spent checking a chat request and splitting it, calling the
 * real functions of the standard adapter in a tight loop (in a child process of its own, so the
 * harness's own work does not share its heap or JIT): the body schema check, the split into predict
 * data and config (`splitRequest`, both JSON texts included), and the registry check of the config
 * (`Pipeline.validateConfig`). Every iteration parses a fresh copy of the body first (not timed,
 * reported apart as context), so no object is checked twice.
 */
import { buildConfig } from '../../core/config/load.js';
import { Directory } from '../../core/admission/directory.js';
import { Pipeline } from '../../core/admission/pipeline.js';
import { RateLimiter } from '../../core/admission/request-rate/local-rate-limiter.js';
import { createRegistry } from '../../core/registry/registry.js';
import { compileBodyCheck } from '../../plugins/_shared/openai/validate.js';
import { CHAT_BODY, type OpenAiBody } from '../../plugins/chatapi/schemas.js';
import { splitRequest } from '../../plugins/chatapi/transform.js';
import { benchConfigInput, chatRequest } from '../lib/config.js';
import { Samples } from '../lib/stats.js';

export interface ValidationCase {
  name: string;
  bodyBytes: number;
  iterations: number;
  /** Body check + split + registry check, per request. */
  totalUs: { p50: number; p99: number; mean: number };
  checkUs: { p50: number; p99: number };
  splitUs: { p50: number; p99: number };
  registryUs: { p50: number; p99: number };
  /** JSON.parse of the body, not part of the total. */
  parseUs: { p50: number; p99: number };
}

const longText = (n: number) => 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(n / 45)).slice(0, n);

/** Representative bodies: what OpenAI clients send, from a one-liner to a long conversation with tools. */
export function validationBodies(): Record<string, Record<string, unknown>> {
  const conversation = Array.from({ length: 6 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: longText(200) }));
  const tool = (name: string) => ({
    type: 'function',
    function: {
      name,
      description: `Looks up ${name}`,
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
        required: ['city'],
      },
    },
  });
  return {
    minimal: { model: 'bench/echo', messages: [{ role: 'user', content: 'hello' }] },
    typical: chatRequest('bench/echo'),
    conversation: {
      ...chatRequest('bench/echo/bench-1'),
      messages: [{ role: 'system', content: longText(300) }, ...conversation],
      stream: true,
      stream_options: { include_usage: true },
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      seed: 42,
      user: 'user-1234',
    },
    tools: {
      ...chatRequest('bench/echo'),
      tools: [tool('weather'), tool('time'), tool('news')],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      response_format: { type: 'json_object' },
      reasoning_effort: 'low',
    },
    long: {
      ...chatRequest('bench/echo'),
      messages: Array.from({ length: 40 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: longText(1000) })),
    },
  };
}

export function measureValidation(iterations: number, warmup = Math.min(5000, iterations)): ValidationCase[] {
  const config = buildConfig(benchConfigInput(), { env: {} });
  const directory = new Directory(config);
  const pipeline = new Pipeline(directory, new RateLimiter());
  pipeline.addValidator(createRegistry(config));
  const service = directory.service('bench', 'echo');
  const check = compileBodyCheck<OpenAiBody>(CHAT_BODY);
  const out: ValidationCase[] = [];
  for (const [name, body] of Object.entries(validationBodies())) {
    const text = JSON.stringify(body);
    const total = new Samples();
    const parts = { check: new Samples(), split: new Samples(), registry: new Samples(), parse: new Samples() };
    let sink = 0;
    for (let i = 0; i < warmup + iterations; i++) {
      const p0 = performance.now();
      const parsed = JSON.parse(text) as unknown;
      const t0 = performance.now();
      const checked = check(parsed);
      const t1 = performance.now();
      const split = splitRequest(checked, 'chat', 'bench-1', text);
      const t2 = performance.now();
      pipeline.validateConfig(service, split.configObject, undefined);
      const t3 = performance.now();
      sink += split.data.length;
      if (i < warmup) continue;
      parts.parse.push(t0 - p0);
      parts.check.push(t1 - t0);
      parts.split.push(t2 - t1);
      parts.registry.push(t3 - t2);
      total.push(t3 - t0);
    }
    if (sink === 0) throw new Error('nothing was split');
    const us = (s: Samples) => {
      const [p50, p99] = s.percentiles(50, 99);
      return { p50: p50! * 1000, p99: p99! * 1000 };
    };
    const values = total.values();
    out.push({
      name,
      bodyBytes: Buffer.byteLength(text),
      iterations,
      totalUs: { ...us(total), mean: (values.reduce((a, b) => a + b, 0) / values.length) * 1000 },
      checkUs: us(parts.check),
      splitUs: us(parts.split),
      registryUs: us(parts.registry),
      parseUs: us(parts.parse),
    });
  }
  return out;
}

// As a child process: measure and send the result to the harness.
if (process.send && process.env.BENCH_VALIDATION_ITERATIONS) {
  const result = measureValidation(Number(process.env.BENCH_VALIDATION_ITERATIONS));
  process.send({ type: 'ready', cases: result }, () => process.exit(0));
}
