/**
 * Responses `custom` (free-form) tools to a chat engine (issue 30; Codex CLI's `apply_patch` is one):
 * the tool becomes a chat function with one string parameter `input`, the engine's call of it comes
 * back as a `custom_tool_call` item whose `input` is that string (whole and streamed, with the
 * `response.custom_tool_call_input.*` events), and a later turn's `custom_tool_call` and
 * `custom_tool_call_output` items go back to the engine as the tool call and its result. Before, a
 * custom tool was a 400. Real gateway, a scripted chat engine on loopback behind the upstream
 * connector, judged by the official openai Node SDK.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { startUpstream, type Upstream } from '../support/upstream.js';

const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+hello "world"\n*** End Patch';
const APPLY_PATCH: OpenAI.Responses.CustomTool = {
  type: 'custom',
  name: 'apply_patch',
  description: 'Apply a patch to the workspace',
  format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch" /(.|\\n)*/ "*** End Patch"' },
};

describe('Responses custom tools to a chat engine', () => {
  let engine: Upstream;
  let gw: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    // Calls apply_patch with PATCH when it is offered and no tool result came back yet; then says what the tool answered.
    engine = await startUpstream(({ body }, res) => {
      const last = body.messages.at(-1);
      const offered = (body.tools ?? []).some((t: any) => t.function?.name === 'apply_patch');
      const call =
        offered && last.role !== 'tool'
          ? { id: 'call_patch_1', type: 'function', function: { name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }) } }
          : undefined;
      const message = call
        ? { role: 'assistant', content: null, tool_calls: [call] }
        : { role: 'assistant', content: `tool said: ${last.content}` };
      const finish = call ? 'tool_calls' : 'stop';
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({
            id: 'chatcmpl-1',
            object: 'chat.completion',
            created: 1,
            model: body.model,
            choices: [{ index: 0, message, finish_reason: finish }],
          }),
        );
      }
      const chunk = (delta: unknown, finish_reason: string | null = null) =>
        `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason }] })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (call) {
        // The arguments in pieces, as engines stream them.
        const args = call.function.arguments;
        res.write(
          chunk({
            role: 'assistant',
            tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: 'apply_patch', arguments: args.slice(0, 10) } }],
          }),
        );
        res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(10) } }] }));
      } else {
        res.write(chunk({ role: 'assistant', content: message.content }));
      }
      res.write(chunk({}, finish));
      res.end('data: [DONE]\n\n');
    });
    gw = await startTestGateway(
      testConfigInput({
        services: [
          {
            id: 43,
            name: 'coder',
            account: 'demo',
            public: true,
            family: 'openai',
            upstream: { api: 'openai', baseUrl: `${engine.url}/v1`, defaultModel: 'engine-coder' },
          },
        ],
        plugins: { enabled: ['chatapi', 'upstream'] },
      }),
    );
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await engine?.close();
  });

  it('offers the engine a function with one string parameter, its grammar in the description', async () => {
    await client.responses.create({ model: 'demo/coder', input: 'add hello.txt', tools: [APPLY_PATCH], store: false });
    const tool = engine.requests.at(-1)!.body.tools[0];
    expect(tool).toMatchObject({
      type: 'function',
      function: {
        name: 'apply_patch',
        description: 'Apply a patch to the workspace',
        parameters: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'], additionalProperties: false },
      },
    });
    expect(tool.function.parameters.properties.input.description).toContain('*** Begin Patch');
  });

  it("maps the engine's call back to a custom_tool_call item with the raw input, and the next turn's items back to the engine", async () => {
    const first = await client.responses.create({ model: 'demo/coder', input: 'add hello.txt', tools: [APPLY_PATCH], store: false });
    const call = first.output.find((item) => item.type === 'custom_tool_call') as OpenAI.Responses.ResponseCustomToolCall;
    expect(call).toMatchObject({ type: 'custom_tool_call', call_id: 'call_patch_1', name: 'apply_patch', input: PATCH });
    expect(call.id).toMatch(/^ctc_/);

    const second = await client.responses.create({
      model: 'demo/coder',
      tools: [APPLY_PATCH],
      store: false,
      input: [
        { role: 'user', content: 'add hello.txt' },
        { type: 'custom_tool_call', call_id: call.call_id, name: call.name, input: call.input },
        { type: 'custom_tool_call_output', call_id: call.call_id, output: 'Done: A hello.txt' },
      ],
    });
    expect(second.output_text).toBe('tool said: Done: A hello.txt');
    expect(engine.requests.at(-1)!.body.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_patch_1', type: 'function', function: { name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }) } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_patch_1', content: 'Done: A hello.txt' },
    ]);
  });

  it('streams the call as a custom_tool_call item with custom_tool_call_input events', async () => {
    const stream = await client.responses.create({
      model: 'demo/coder',
      input: 'add hello.txt',
      tools: [APPLY_PATCH],
      store: false,
      stream: true,
    });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const types = events.map((e) => e.type);
    expect(types).not.toContain('response.function_call_arguments.delta');
    const deltas = events.filter(
      (e): e is OpenAI.Responses.ResponseCustomToolCallInputDeltaEvent => e.type === 'response.custom_tool_call_input.delta',
    );
    expect(deltas.map((d) => d.delta).join('')).toBe(PATCH);
    const done = events.find(
      (e): e is OpenAI.Responses.ResponseCustomToolCallInputDoneEvent => e.type === 'response.custom_tool_call_input.done',
    );
    expect(done?.input).toBe(PATCH);
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.type).toBe('response.completed');
    expect(completed.response.output).toEqual([
      expect.objectContaining({
        type: 'custom_tool_call',
        call_id: 'call_patch_1',
        name: 'apply_patch',
        input: PATCH,
        status: 'completed',
      }),
    ]);
  });

  it('a forced custom tool (tool_choice) is the function it became', async () => {
    await client.responses.create({
      model: 'demo/coder',
      input: 'x',
      tools: [APPLY_PATCH],
      tool_choice: { type: 'custom', name: 'apply_patch' },
      store: false,
    });
    expect(engine.requests.at(-1)!.body.tool_choice).toEqual({ type: 'function', function: { name: 'apply_patch' } });
  });
});
