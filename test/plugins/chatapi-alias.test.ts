/**
 * The base URLs users guess, judged by the official SDKs with only the base URL and key changed:
 * `OPENAI_BASE_URL=<gateway>/v1` and `ANTHROPIC_BASE_URL=<gateway>` reach the standard adapter
 * (its `aliasPrefix: /v1` option), model names without a slash (service aliases) are listed and
 * callable, and an unknown path or model answers 404 with a hint naming what to send instead.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTHER_ACCOUNT_KEY, TEST_KEY } from '../support/gateway.js';
import { startChatFixture, type ChatFixture } from '../support/chat-fixture.js';

describe('the /v1 alias prefix and model aliases', () => {
  let fx: ChatFixture;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    fx = await startChatFixture({ chatapi: { aliasPrefix: '/v1' } });
    openai = new OpenAI({ apiKey: TEST_KEY, baseURL: `${fx.gw.httpUrl}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: TEST_KEY, baseURL: fx.gw.httpUrl, maxRetries: 0 });
  });
  afterAll(async () => {
    await fx?.close();
  });

  it('works with the SDK configured by OPENAI_BASE_URL and OPENAI_API_KEY alone', async () => {
    const saved = { url: process.env.OPENAI_BASE_URL, key: process.env.OPENAI_API_KEY };
    process.env.OPENAI_BASE_URL = `${fx.gw.httpUrl}/v1`;
    process.env.OPENAI_API_KEY = TEST_KEY;
    try {
      const fromEnv = new OpenAI({ maxRetries: 0 });
      const chat = await fromEnv.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'env' }] });
      expect(chat.choices[0]!.message.content).toContain('env');
    } finally {
      for (const [name, value] of [
        ['OPENAI_BASE_URL', saved.url],
        ['OPENAI_API_KEY', saved.key],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('serves chat, completions, embeddings, responses and models under /v1', async () => {
    const chat = await openai.chat.completions.create({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.choices[0]!.message.content).toContain('hi');
    const completion = await openai.completions.create({ model: 'demo/echo', prompt: 'hello' });
    expect(completion.object).toBe('text_completion');
    const embeddings = await openai.embeddings.create({ model: 'demo/echo', input: 'abc' });
    expect(embeddings.data[0]!.embedding.length).toBeGreaterThan(0);
    const response = await openai.responses.create({ model: 'demo/echo', input: 'ping' });
    expect(response.output_text).toContain('ping');
  });

  it('serves the Messages API at /v1/messages for an Anthropic SDK whose base URL is the gateway', async () => {
    const message = await anthropic.messages.create({ model: 'demo/echo', max_tokens: 32, messages: [{ role: 'user', content: 'hey' }] });
    expect(message.content[0]).toMatchObject({ type: 'text' });
    const count = await anthropic.messages.countTokens({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hey' }] });
    expect(count.input_tokens).toBeGreaterThan(0);
  });

  it('lists aliases with the models a key may call, and calls services by them', async () => {
    const ids: string[] = [];
    for await (const model of openai.models.list()) ids.push(model.id);
    expect(ids).toEqual(expect.arrayContaining(['echo', 'gpt-5-codex', 'claude-sonnet-4-5', 'private-model', 'demo/echo']));
    const other = new OpenAI({ apiKey: OTHER_ACCOUNT_KEY, baseURL: `${fx.gw.httpUrl}/v1`, maxRetries: 0 });
    const visible: string[] = [];
    for await (const model of other.models.list()) visible.push(model.id);
    expect(visible).toContain('echo');
    expect(visible).not.toContain('private-model');
    await expect(other.models.retrieve('private-model')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(await openai.models.retrieve('gpt-5-codex')).toMatchObject({ id: 'gpt-5-codex', owned_by: 'demo' });

    const byAlias = await openai.chat.completions.create({ model: 'gpt-5-codex', messages: [{ role: 'user', content: 'alias' }] });
    expect(byAlias.choices[0]!.message.content).toBe('Upstream heard: alias');
    // The engine gets the service's default model, not the alias.
    expect(fx.openAiUpstream.requests.at(-1)!.body.model).toBe('gpt-up-default');
    const message = await anthropic.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(message.model).toBeDefined();
  });

  it('a private alias is as unknown to another account as an unknown name', async () => {
    const other = new OpenAI({ apiKey: OTHER_ACCOUNT_KEY, baseURL: `${fx.gw.httpUrl}/v1`, maxRetries: 0 });
    const err = await other.chat.completions
      .create({ model: 'private-model', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as Error).message).not.toContain('private-model,');
    expect((err as Error).message).not.toContain('demo/private');
  });

  it('an unknown model names the <account>/<service> form and the closest matches', async () => {
    const err = await openai.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    const message = (err as Error).message;
    expect(message).toContain("Model 'gpt-4o' does not exist");
    expect(message).toContain('<account>/<service>');
    expect(message).toContain('GET /v1/models');
    expect(message).toMatch(/closest: gpt-5-codex/);
  });

  it('an unknown path under /v1 is a 404 naming what the prefix serves', async () => {
    const res = await fetch(`${fx.gw.httpUrl}/v1/chat/complete`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}` },
      body: '{}',
    });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('NOT_FOUND');
    expect(body.error.message).toContain('chat/completions');
    expect(body.error.message).toContain('GET /v1/models');
  });
});
