/**
 * A service declared `nativeResponses` speaks the Responses API itself: the standard adapter passes
 * the body through unchanged and relays its answer and typed events, judged by the official openai
 * Node SDK; a native stream that stops before its terminal event ends with an error event.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatConfigInput } from '../support/chat.js';
import { startTestGateway, TEST_KEY, type TestGateway } from '../support/gateway.js';
import { startRawModel, type RawModel } from '../support/raw-model.js';

const TOKEN = 'native-responses-token-001';

/** A Responses API "engine": a response object, or its typed events; input `cut` stops mid-stream. */
function nativeAnswer(body: any): unknown {
  const response = (status: string, text: string) => ({
    id: 'resp_native_1',
    object: 'response',
    created_at: 1,
    status,
    model: body.model,
    error: null,
    incomplete_details: null,
    output: text
      ? [
          {
            id: 'msg_native_1',
            type: 'message',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text, annotations: [] }],
          },
        ]
      : [],
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
  });
  const text = `Native: ${String(body.input)}`;
  if (!body.stream) return response('completed', text);
  return (async function* events() {
    let n = 0;
    yield { type: 'response.created', sequence_number: n++, response: response('in_progress', '') };
    if (body.input === 'cut') return;
    yield {
      type: 'response.output_item.added',
      sequence_number: n++,
      output_index: 0,
      item: { id: 'msg_native_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    };
    yield {
      type: 'response.content_part.added',
      sequence_number: n++,
      item_id: 'msg_native_1',
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    };
    yield {
      type: 'response.output_text.delta',
      sequence_number: n++,
      item_id: 'msg_native_1',
      output_index: 0,
      content_index: 0,
      delta: text,
    };
    yield { type: 'response.output_text.done', sequence_number: n++, item_id: 'msg_native_1', output_index: 0, content_index: 0, text };
    yield {
      type: 'response.content_part.done',
      sequence_number: n++,
      item_id: 'msg_native_1',
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text, annotations: [] },
    };
    yield { type: 'response.output_item.done', sequence_number: n++, output_index: 0, item: response('completed', text).output[0] };
    yield { type: 'response.completed', sequence_number: n++, response: response('completed', text) };
  })();
}

describe('Responses API passed through to a service that speaks it natively', () => {
  let gw: TestGateway;
  let native: RawModel;
  let client: OpenAI;

  beforeAll(async () => {
    const input = chatConfigInput();
    input.services.push({
      id: 16,
      name: 'native',
      account: 'demo',
      public: true,
      nativeResponses: true,
      connectionTokens: [{ token: TOKEN }],
    });
    gw = await startTestGateway(input);
    native = await startRawModel(gw.grpcAddress, TOKEN, (req) => nativeAnswer(req.data));
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gw.httpUrl}/api/adapters/chatapi/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    native?.close();
    await gw?.close();
  });

  it("passes the body unchanged and returns the service's response", async () => {
    const response = await client.responses.create({ model: 'demo/native/some-model', input: 'hello', temperature: 0.3 });
    expect(response.output_text).toBe('Native: hello');
    const got = native.requests.at(-1)!;
    expect(JSON.parse(got.dataText)).toEqual({ model: 'demo/native/some-model', input: 'hello', temperature: 0.3 });
    expect(got.dataType).toMatch(/gpt\.json#\/ResponsesRequest$/);
    expect(got.config).toBeUndefined();
  });

  it("relays the service's typed events; the stream helper gives the final response", async () => {
    const final = await client.responses.stream({ model: 'demo/native', input: 'streamed' }).finalResponse();
    expect(final.output_text).toBe('Native: streamed');
  });

  it('ends a native stream cut off before its terminal event with an error', async () => {
    const stream = await client.responses.create({ model: 'demo/native', input: 'cut', stream: true });
    const types: string[] = [];
    await expect(
      (async () => {
        for await (const event of stream) types.push(event.type);
      })(),
    ).rejects.toThrow(/terminal event/);
    expect(types).toEqual(['response.created']);
  });
});
