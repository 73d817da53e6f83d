/**
 * The upstream connector to an engine that speaks the Responses API (issue 30, Codex CLI): a service
 * with `nativeResponses: true` and `upstream.api: openai` gets the caller's Responses body at the
 * engine's `<baseUrl>/responses`, whole and streamed, its model named as the engine knows it and every
 * other field (Codex's namespace and hosted tools, `include`, `reasoning`) as the caller sent it.
 * Before, the body went to `/embeddings` (it has `input`). Real gateway and a scripted engine on
 * loopback, judged by the official openai Node SDK.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { startUpstream, type Upstream } from '../support/upstream.js';

/** A Responses API answer as an engine sends it. */
function responseObject(model: string, text: string, status = 'completed') {
  return {
    id: 'resp_engine_1',
    object: 'response',
    created_at: 1_700_000_000,
    status,
    model,
    output: [
      { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] },
    ],
    usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 },
  };
}

const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

describe('upstream connector: an engine that speaks the Responses API', () => {
  let engine: Upstream;
  let gw: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    engine = await startUpstream(({ path, body }, res) => {
      if (path !== '/v1/responses') {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: `no route ${path}`, type: 'invalid_request_error' } }));
      }
      const input = typeof body.input === 'string' ? body.input : 'list';
      if (input === 'refuse') {
        res.writeHead(400, { 'content-type': 'application/json', 'x-request-id': 'req_engine_resp' });
        return res.end(
          JSON.stringify({
            error: { message: 'tool namespace unknown', type: 'invalid_request_error', param: 'tools', code: 'bad_tools' },
          }),
        );
      }
      const answer = responseObject(body.model, `engine heard: ${input}`);
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify(answer));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(event('response.created', { sequence_number: 0, response: { ...answer, status: 'in_progress', output: [] } }));
      if (input === 'fail mid-stream') {
        res.write(event('error', { sequence_number: 1, code: 'server_error', message: 'the engine ran out of memory', param: null }));
        return res.end();
      }
      res.write(
        event('response.output_text.delta', {
          sequence_number: 1,
          item_id: 'msg_1',
          output_index: 0,
          content_index: 0,
          delta: 'engine heard: ',
        }),
      );
      res.write(
        event('response.output_text.delta', { sequence_number: 2, item_id: 'msg_1', output_index: 0, content_index: 0, delta: input }),
      );
      if (input === 'cut off') return res.end();
      res.write(event('response.completed', { sequence_number: 3, response: answer }));
      res.end();
    });
    gw = await startTestGateway(
      testConfigInput({
        services: [
          {
            id: 42,
            name: 'codex',
            account: 'demo',
            public: true,
            family: 'openai',
            nativeResponses: true,
            aliases: ['gpt-5-codex'],
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

  /** Codex CLI's tools: a namespace and a hosted tool, which only a Responses engine takes as they are. */
  const tools = [
    {
      type: 'function',
      name: 'shell',
      description: 'run a command',
      parameters: { type: 'object', properties: { command: { type: 'string' } } },
      strict: false,
    },
    {
      type: 'namespace',
      name: 'multi_agent_v1',
      tools: [{ type: 'function', name: 'spawn', parameters: { type: 'object', properties: {} } }],
    },
    { type: 'web_search' },
  ] as unknown as OpenAI.Responses.Tool[];

  it('passes a whole request to <baseUrl>/responses with the engine model, the rest as sent', async () => {
    const response = await client.responses.create({
      model: 'gpt-5-codex',
      input: 'hello',
      tools,
      reasoning: { effort: 'high' },
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'session-1',
    });
    expect(response.output_text).toBe('engine heard: hello');
    const sent = engine.requests.at(-1)!;
    expect(sent.path).toBe('/v1/responses');
    expect(sent.body).toEqual({
      model: 'engine-coder',
      input: 'hello',
      tools,
      reasoning: { effort: 'high' },
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'session-1',
    });
  });

  it('relays a streamed answer event by event, ending with response.completed', async () => {
    const stream = await client.responses.create({ model: 'demo/codex', input: 'stream me', stream: true });
    const types: string[] = [];
    let text = '';
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === 'response.output_text.delta') text += e.delta;
    }
    expect(types).toEqual(['response.created', 'response.output_text.delta', 'response.output_text.delta', 'response.completed']);
    expect(text).toBe('engine heard: stream me');
    expect(engine.requests.at(-1)).toMatchObject({ path: '/v1/responses', body: { model: 'engine-coder', stream: true } });
  });

  it("relays the engine's error exactly, whole", async () => {
    const err = await client.responses.create({ model: 'demo/codex', input: 'refuse' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ message: expect.stringContaining('tool namespace unknown'), code: 'bad_tools', param: 'tools' });
  });

  it("an engine's error event mid-stream is the caller's error event; a stream cut off before its terminal event is an error, never a short answer", async () => {
    const failing = async (input: string) => {
      const stream = await client.responses.create({ model: 'demo/codex', input, stream: true });
      try {
        for await (const e of stream) void e;
      } catch (err) {
        return err as Error;
      }
      return undefined;
    };
    expect((await failing('fail mid-stream'))?.message).toContain('the engine ran out of memory');
    expect((await failing('cut off'))?.message).toMatch(/response\.completed|ended its stream/);
  });
});
