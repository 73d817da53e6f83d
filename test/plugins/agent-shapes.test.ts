/**
 * The shapes coding agents send, accepted and translated faithfully on both adapters, judged by the
 * official SDKs and by what the HTTP engine behind the upstream connector receives. Bodies are
 * modelled on captured requests: Claude Code 2.1 (`role: system` mid-conversation, string content
 * in later turns, `thinking`, `context_management`, `metadata.user_id`, `?beta=true`, anthropic-beta)
 * and Codex CLI 0.169 (a `namespace` tool, `web_search`, `reasoning`, `include`,
 * `prompt_cache_key`, `client_metadata`, `developer` messages).
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY } from '../support/gateway.js';
import { startChatFixture, type ChatFixture } from '../support/chat-fixture.js';

const BETAS = ['claude-code-20250219', 'interleaved-thinking-2025-05-14', 'context-management-2025-06-27'];
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** Claude Code's second request, abridged: a system message mid-conversation, string content, a tool round trip. */
function claudeCodeTurn(model: string): any {
  return {
    model,
    max_tokens: 512,
    system: [
      { type: 'text', text: 'You are Claude Code.' },
      { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
    ],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'read notes.txt' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'notes.txt' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'the notes' }] },
      { role: 'system', content: 'Reminder: the user is in plan mode.' },
      { role: 'user', content: 'and now?' },
    ],
    tools: [{ name: 'Read', description: 'Reads a file', input_schema: { type: 'object', properties: { file_path: { type: 'string' } } } }],
    metadata: { user_id: JSON.stringify({ device_id: 'd', session_id: 's-1' }) },
    thinking: { type: 'enabled', budget_tokens: 1024 },
    context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
    stream: true,
  };
}

describe('agent request shapes', () => {
  let fx: ChatFixture;
  let anthropic: Anthropic;
  let direct: Anthropic;
  let openai: OpenAI;

  beforeAll(async () => {
    fx = await startChatFixture();
    anthropic = new Anthropic({ apiKey: TEST_KEY, baseURL: fx.base, maxRetries: 0 });
    direct = new Anthropic({ apiKey: TEST_KEY, baseURL: fx.direct, maxRetries: 0 });
    openai = new OpenAI({ apiKey: TEST_KEY, baseURL: `${fx.base}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await fx?.close();
  });

  describe('Messages API, standard adapter to a chat engine', () => {
    it("takes Claude Code's turn (?beta=true, system mid-conversation, string content) and keeps every message in place", async () => {
      // Without tools this turn: the engine behind demo/openai-proxy answers any request with tools by a tool call.
      const stream = await anthropic.beta.messages.create({ ...claudeCodeTurn('demo/openai-proxy'), tools: undefined, betas: BETAS });
      let text = '';
      for await (const event of stream as unknown as AsyncIterable<any>)
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      expect(text).toBe('Upstream heard: and now?');
      const sent = fx.openAiUpstream.requests.at(-1)!.body;
      expect(sent.messages).toEqual([
        { role: 'system', content: 'You are Claude Code.\nBe brief.' },
        // Text blocks alone go as a string: llama-cpp-python's chat templates fail on a list.
        { role: 'user', content: 'read notes.txt' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'Read', arguments: '{"file_path":"notes.txt"}' } }],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'the notes' },
        { role: 'system', content: 'Reminder: the user is in plan mode.' },
        { role: 'user', content: 'and now?' },
      ]);
      expect(sent.user).toBe(JSON.stringify({ device_id: 'd', session_id: 's-1' }));
    });

    it('takes a developer message and system blocks the same way', async () => {
      const body = claudeCodeTurn('demo/openai-proxy');
      body.stream = false;
      delete body.tools;
      body.messages[3] = { role: 'developer', content: [{ type: 'text', text: 'dev note' }] };
      const message = await anthropic.messages.create(body);
      expect(message.content).toEqual([{ type: 'text', text: 'Upstream heard: and now?' }]);
      expect(fx.openAiUpstream.requests.at(-1)!.body.messages[4]).toEqual({ role: 'system', content: 'dev note' });
    });

    it('sends the images of a tool result and document blocks on to the engine', async () => {
      const message = await anthropic.messages.create({
        model: 'demo/openai-proxy',
        max_tokens: 64,
        messages: [
          { role: 'user', content: 'look' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'Screenshot', input: {} }] },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 'toolu_2',
                content: [
                  { type: 'text', text: 'a screenshot' },
                  { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
                ],
              },
              { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'spec text' }, title: 'spec.txt' },
              { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
            ],
          },
        ],
      });
      expect(message.content[0]).toMatchObject({ type: 'text' });
      const sent = fx.openAiUpstream.requests.at(-1)!.body.messages;
      expect(sent[2]).toEqual({ role: 'tool', tool_call_id: 'toolu_2', content: 'a screenshot' });
      expect(sent[3]).toEqual({
        role: 'user',
        content: [
          { type: 'text', text: '(attachments of tool result toolu_2)' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'text', text: 'spec.txt\n\nspec text' },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=' } },
        ],
      });
    });
  });

  describe('Messages API to an Anthropic-family service, on both adapters', () => {
    for (const adapter of ['standard', 'direct'] as const) {
      it(`${adapter}: string content and a system message reach the engine as typed blocks, with the beta headers`, async () => {
        const client = adapter === 'direct' ? direct : anthropic;
        const before = fx.anthropicUpstream.requests.length;
        const stream = await client.beta.messages.create({ ...claudeCodeTurn('demo/claude'), betas: BETAS });
        for await (const _ of stream as unknown as AsyncIterable<unknown>) {
          /* drain */
        }
        expect(fx.anthropicUpstream.requests.length).toBe(before + 1);
        const sent = fx.anthropicUpstream.requests.at(-1)!;
        expect(sent.headers['anthropic-beta']).toBe(BETAS.join(','));
        expect(sent.body.messages[3]).toEqual({ role: 'system', content: [{ type: 'text', text: 'Reminder: the user is in plan mode.' }] });
        expect(sent.body.messages[4]).toEqual({ role: 'user', content: [{ type: 'text', text: 'and now?' }] });
        expect(sent.body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
        expect(sent.body.context_management).toEqual({ edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] });
      });
    }
  });

  describe('Responses API, Codex CLI shapes, to a chat engine', () => {
    const codexBody = (extra: Record<string, unknown> = {}): any => ({
      model: 'demo/openai-proxy',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are Codex.' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'weather?' }] },
      ],
      tools: [
        {
          type: 'function',
          name: 'exec_command',
          description: 'Runs a command',
          parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
          strict: false,
        },
        {
          type: 'namespace',
          name: 'weather_v1',
          description: 'Weather tools',
          tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
        },
        { type: 'web_search', external_web_access: false },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      reasoning: { summary: 'auto' },
      store: false,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'session-1',
      client_metadata: { session_id: 'session-1' },
      ...extra,
    });

    it('flattens the namespace, drops web_search with a header, and maps the call back to its namespace', async () => {
      const { data, response } = await openai.responses.create(codexBody()).withResponse();
      expect(response.headers.get('x-gateway-dropped-tools')).toBe('web_search');
      const call = data.output.find((item) => item.type === 'function_call') as any;
      expect(call).toMatchObject({
        type: 'function_call',
        name: 'get_weather',
        namespace: 'weather_v1',
        call_id: 'call_weather_1',
        arguments: '{"city":"Paris"}',
      });
      const sent = fx.openAiUpstream.requests.at(-1)!.body;
      expect(sent.tools.map((t: any) => t.function.name)).toEqual(['exec_command', 'get_weather']);
      // `system`, the role every chat engine takes (llama-cpp-python's server refuses `developer`).
      expect(sent.messages[0]).toEqual({ role: 'system', content: 'You are Codex.' });
      for (const field of ['include', 'prompt_cache_key', 'client_metadata', 'reasoning', 'store']) expect(sent).not.toHaveProperty(field);
    });

    it('streams the mapped call, and takes the namespaced call and its output back as history', async () => {
      const stream = await openai.responses.create({ ...codexBody(), stream: true });
      let done: any;
      for await (const event of stream as unknown as AsyncIterable<any>) if (event.type === 'response.completed') done = event.response;
      expect(done.output.find((item: any) => item.type === 'function_call')).toMatchObject({
        name: 'get_weather',
        namespace: 'weather_v1',
      });

      const next = codexBody();
      next.input.push(
        { type: 'function_call', call_id: 'call_weather_1', name: 'get_weather', namespace: 'weather_v1', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_weather_1', output: 'sunny' },
      );
      const answer = await openai.responses.create(next);
      expect(answer.output_text).toBe('The tool said: sunny');
      const sent = fx.openAiUpstream.requests.at(-1)!.body;
      expect(sent.messages.at(-2).tool_calls[0].function.name).toBe('get_weather');
    });

    it('refuses a request that forces a hosted tool, before any engine call', async () => {
      const before = fx.openAiUpstream.requests.length;
      const err = await openai.responses.create(codexBody({ tool_choice: { type: 'web_search' } })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as Error).message).toContain("'web_search' cannot be forced on a chat service");
      expect(fx.openAiUpstream.requests.length).toBe(before);
    });

    it('gives a namespaced tool the name <namespace>__<name> when another tool has its name', async () => {
      const body = codexBody();
      body.tools.push({ type: 'function', name: 'get_weather', parameters: { type: 'object' } });
      const answer = await openai.responses.create(body);
      expect(fx.openAiUpstream.requests.at(-1)!.body.tools.map((t: any) => t.function.name)).toEqual([
        'exec_command',
        'weather_v1__get_weather',
        'get_weather',
      ]);
      // The engine called the plain get_weather: no namespace.
      expect(answer.output.find((item) => item.type === 'function_call')).not.toHaveProperty('namespace');
    });
  });
});
