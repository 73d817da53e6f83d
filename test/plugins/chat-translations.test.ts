/**
 * The pure translations between the Responses and Messages APIs and Chat Completions, on the cases
 * the SDK suites do not reach: how input items and blocks become messages, finish reasons, usage,
 * and the order and content of translated stream events.
 */
import { describe, expect, it } from 'vitest';
import { gatewayError } from '../../core/plugins/index.js';
import { messageFromChat, messagesUsage } from '../../plugins/chatapi/messages/answer.js';
import { toChatRequest as messagesToChat } from '../../plugins/chatapi/messages/request.js';
import { MessagesStream } from '../../plugins/chatapi/messages/stream.js';
import { responseFromChat } from '../../plugins/chatapi/responses/answer.js';
import { toChatRequest as responsesToChat } from '../../plugins/chatapi/responses/request.js';
import { ResponsesStream } from '../../plugins/chatapi/responses/stream.js';

const chunk = (delta: object, finish: string | null = null, extra: object = {}) =>
  JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }], ...extra });
const events = (sse: string) => [...sse.matchAll(/^event: (.+)\ndata: (.+)$/gm)].map((m) => ({ event: m[1]!, data: JSON.parse(m[2]!) }));

describe('Responses → Chat', () => {
  it('merges consecutive function calls into one assistant turn and maps outputs to tool messages', () => {
    const { chat, inputItems } = responsesToChat({
      model: 'm',
      input: [
        { role: 'user', content: 'two cities' },
        { type: 'function_call', call_id: 'c1', name: 'w', arguments: '{"city":"A"}' },
        { type: 'function_call', call_id: 'c2', name: 'w', arguments: '{"city":"B"}' },
        {
          type: 'function_call_output',
          call_id: 'c1',
          output: [
            { type: 'input_text', text: '1' },
            { type: 'input_text', text: '0' },
          ],
        },
        { type: 'function_call_output', call_id: 'c2', output: '20' },
      ],
      tool_choice: { type: 'function', name: 'w' },
      text: { format: { type: 'json_object' } },
    });
    expect(chat.messages).toEqual([
      { role: 'user', content: 'two cities' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'w', arguments: '{"city":"A"}' } },
          { id: 'c2', type: 'function', function: { name: 'w', arguments: '{"city":"B"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '10' },
      { role: 'tool', tool_call_id: 'c2', content: '20' },
    ]);
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'w' } });
    expect(chat.response_format).toEqual({ type: 'json_object' });
    expect(inputItems.map((i) => i.id)).toEqual([
      expect.stringMatching(/^msg_/),
      expect.stringMatching(/^fc_/),
      expect.stringMatching(/^fc_/),
      expect.stringMatching(/^fco_/),
      expect.stringMatching(/^fco_/),
    ]);
  });

  it('refuses what chat services cannot take, naming the field', () => {
    const param = (body: object) => {
      try {
        responsesToChat({ model: 'm', ...body });
      } catch (err) {
        return (err as ReturnType<typeof gatewayError>).param;
      }
      return 'accepted';
    };
    expect(param({ input: [{ type: 'item_reference', id: 'x' }] })).toBe('input[0].type');
    expect(param({ input: [{ role: 'user', content: [{ type: 'input_audio' }] }] })).toBe('content[0].type');
    expect(param({})).toBe('input');
  });

  it('gives status incomplete for length and content_filter finishes', () => {
    const head = { id: 'resp_1', createdAt: 1, model: 'm', body: { model: 'm' } };
    const answer = (finish: string) => responseFromChat(head, { choices: [{ message: { content: 'x' }, finish_reason: finish }] });
    expect(answer('length')).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(answer('content_filter')).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'content_filter' } });
    expect(answer('stop')).toMatchObject({ status: 'completed', incomplete_details: null });
  });

  it('streams items one after another with consecutive sequence numbers, ending response.incomplete on length', () => {
    const stream = new ResponsesStream({ id: 'resp_1', createdAt: 1, model: 'm', body: { model: 'm' } });
    let sse = stream.chunk(chunk({ role: 'assistant', content: 'Hi' }));
    sse += stream.chunk(chunk({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'w', arguments: '{"a"' } }] }));
    sse += stream.chunk(chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, 'length'));
    sse += stream.chunk(JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }));
    sse += stream.finish();
    const all = events(sse);
    expect(all.map((e) => e.data.sequence_number)).toEqual(all.map((_, i) => i));
    expect(all.every((e) => e.event === e.data.type)).toBe(true);
    expect(all.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.incomplete',
    ]);
    const final = all.at(-1)!.data.response;
    expect(final.output.map((i: any) => i.type)).toEqual(['message', 'function_call']);
    expect(final.output[1]).toMatchObject({ call_id: 'c1', arguments: '{"a":1}', status: 'completed' });
    expect(final.usage).toMatchObject({ input_tokens: 3, output_tokens: 2, total_tokens: 5 });
  });

  it('reports an error after the start as error then response.failed', () => {
    const stream = new ResponsesStream({ id: 'resp_1', createdAt: 1, model: 'm', body: { model: 'm' } });
    const sse =
      stream.chunk(chunk({ content: 'Hi' })) + stream.fail(gatewayError('STREAM_IDLE_TIMEOUT', { args: { service: 's', timeoutSec: 1 } }));
    const all = events(sse);
    expect(all.slice(-2).map((e) => e.event)).toEqual(['error', 'response.failed']);
    expect(all.at(-2)!.data).toMatchObject({ code: 'STREAM_IDLE_TIMEOUT', error: { code: 'STREAM_IDLE_TIMEOUT', type: 'api_error' } });
    expect(all.at(-1)!.data.response).toMatchObject({ status: 'failed', error: { code: 'STREAM_IDLE_TIMEOUT' } });
  });
});

describe('Messages → Chat', () => {
  it('hoists system, puts tool results first in their turn, and maps images and options', () => {
    const chat = messagesToChat({
      model: 'm',
      max_tokens: 10,
      system: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
      stop_sequences: ['END'],
      metadata: { user_id: 'u1' },
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
      messages: [
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'calling' },
            { type: 'tool_use', id: 't1', name: 'w', input: { x: 1 } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'and this' },
            { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'boom' }], is_error: true },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
          ],
        },
      ],
    });
    expect(chat).toMatchObject({ max_tokens: 10, stop: ['END'], user: 'u1', tool_choice: 'required', parallel_tool_calls: false });
    expect(chat.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'output', schema: { type: 'object' }, strict: true },
    });
    expect(chat.messages).toEqual([
      { role: 'system', content: 'a\nb' },
      {
        role: 'assistant',
        content: 'calling',
        tool_calls: [{ id: 't1', type: 'function', function: { name: 'w', arguments: '{"x":1}' } }],
      },
      { role: 'tool', tool_call_id: 't1', content: 'Error: boom' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'and this' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
    ]);
  });

  it('sends a turn of text blocks alone as one string, the blocks joined by newlines', () => {
    // Claude Code's first turn is nine text blocks; llama-cpp-python's chat templates fail on a list.
    const chat = messagesToChat({
      model: 'm',
      max_tokens: 10,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: '<system-reminder>x</system-reminder>' },
            { type: 'text', text: 'Say hi.' },
          ],
        },
      ],
    });
    expect(chat.messages).toEqual([{ role: 'user', content: '<system-reminder>x</system-reminder>\nSay hi.' }]);
  });

  it('maps finish reasons to stop reasons and keeps cached tokens out of input_tokens', () => {
    const message = (finish: string) => messageFromChat({ choices: [{ message: { content: 'x' }, finish_reason: finish }] }, 'msg_1', 'm');
    expect(['stop', 'length', 'tool_calls', 'content_filter'].map((f) => message(f).stop_reason)).toEqual([
      'end_turn',
      'max_tokens',
      'tool_use',
      'refusal',
    ]);
    expect(messagesUsage({ prompt_tokens: 10, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 4 } })).toEqual({
      input_tokens: 6,
      output_tokens: 3,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 4,
    });
  });

  it('streams blocks opened lazily and closed before the next, ending message_delta and message_stop', () => {
    const stream = new MessagesStream('msg_1', 'm');
    let sse = stream.chunk(chunk({ role: 'assistant', content: '' }));
    sse += stream.chunk(chunk({ content: 'Hi' }));
    sse += stream.chunk(chunk({ tool_calls: [{ index: 0, id: 't1', function: { name: 'w', arguments: '{"a":' } }] }));
    sse += stream.chunk(
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }, 'tool_calls', {
        usage: { prompt_tokens: 2, completion_tokens: 5 },
      }),
    );
    sse += stream.finish();
    const all = events(sse);
    expect(all.map((e) => e.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(all[5]!.data).toEqual({
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 't1', name: 'w', input: {} },
    });
    expect(
      all
        .filter((e) => e.data.delta?.type === 'input_json_delta')
        .map((e) => e.data.delta.partial_json)
        .join(''),
    ).toBe('{"a":1}');
    expect(all.at(-2)!.data).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { input_tokens: 2, output_tokens: 5 } });
  });
});
