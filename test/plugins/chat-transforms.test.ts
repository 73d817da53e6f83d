/** The pure parts of the chat adapters, without HTTP. */
import { describe, expect, it } from 'vitest';
import { completeAnswer, mergeChunks, wholeAnswerAsEvents, type AnswerDefaults } from '../../plugins/_shared/openai/answers.js';
import { hasAnswerHead, topLevelValues } from '../../plugins/_shared/openai/json-text.js';
import { parseModelId } from '../../plugins/_shared/openai/model-id.js';
import { oneLine } from '../../plugins/_shared/openai/relay.js';
import { findUsage, mergeUsage } from '../../plugins/_shared/openai/usage.js';
import { base64ToFloats, encodeEmbeddings, floatsToBase64, meanPool, splitRequest } from '../../plugins/chatapi/transform.js';
import { anthropicEvent, anthropicMessageAsEvents } from '../../plugins/_shared/anthropic/events.js';
import { sseData } from '../support/chat.js';

const defaults: AnswerDefaults = { id: 'chatcmpl-r1', created: 1700, model: 'demo/echo', object: 'chat.completion', includeUsage: false };

describe('model ids', () => {
  it('splits <author>/<service>[/model], keeping slashes of the model', () => {
    expect(parseModelId('just-ai/openai-proxy/gpt-4o')).toEqual({ author: 'just-ai', service: 'openai-proxy', model: 'gpt-4o' });
    expect(parseModelId('acme/vllm/meta-llama/Llama-3-8B')).toEqual({ author: 'acme', service: 'vllm', model: 'meta-llama/Llama-3-8B' });
    expect(parseModelId('acme/svc')).toEqual({ author: 'acme', service: 'svc', model: undefined });
    expect(parseModelId('acme/svc/')).toEqual({ author: 'acme', service: 'svc', model: undefined });
    for (const bad of ['gpt-4o', '/svc', 'acme/', 'acme//m', '']) expect(parseModelId(bad), bad).toBeUndefined();
  });
});

describe('split rule', () => {
  it('puts model, messages and stream into the data and every other field into the config', () => {
    const split = splitRequest(
      { model: 'a/b/m', messages: [{ role: 'user', content: 'x' }], stream: true, temperature: 1, stream_options: { include_usage: true } },
      'chat',
      'm',
    );
    expect(JSON.parse(split.data)).toEqual({ messages: [{ role: 'user', content: 'x' }], stream: true, model: 'm' });
    expect(JSON.parse(split.config)).toEqual({ temperature: 1, stream_options: { include_usage: true } });
  });
  it("assembles the same data and config from the body's own text, members passed as they came", () => {
    const texts = [
      '{"model":"a/b/m","messages":[{"role":"user","content":"x"}],"stream":true,"temperature":1,"stream_options":{"include_usage":true}}',
      ' { "temperature" : 0.5 ,\n "messages" : [ {"role":"user","content":"quote \\" and \\\\ and } ] { , :"} ] , "model":"a/b" } ',
      '{"model":"a/b","messages":[{"role":"user","content":"first"}],"messages":[{"role":"user","content":"last wins"}],"n":1}',
      '{"m\\u0065ssages":[{"role":"user","content":"\\u00e9t\\u00e9 – 😀"}],"model":"a/b","seed":12345678901234567890}',
      '{"model":"a/b","messages":[]}',
    ];
    for (const text of texts) {
      const body = JSON.parse(text);
      const fast = splitRequest(body, 'chat', 'm', text);
      const slow = splitRequest(body, 'chat', 'm');
      expect(JSON.parse(fast.data), text).toEqual(JSON.parse(slow.data));
      expect(JSON.parse(fast.config), text).toEqual(JSON.parse(slow.config));
      expect(fast.configObject).toEqual(slow.configObject);
    }
    expect(splitRequest(JSON.parse(texts[1]!), 'chat', 'm', texts[1]).data).toBe(
      '{"messages":[ {"role":"user","content":"quote \\" and \\\\ and } ] { , :"} ],"model":"m"}',
    );
  });
  it('reads the raw top-level members of a JSON object text', () => {
    expect(topLevelValues(' {"a" : [1, {"b":"}"}] , "c":"x\\"y", "d":null,"e":-1.5e3}')).toEqual(
      new Map([
        ['a', '[1, {"b":"}"}]'],
        ['c', '"x\\"y"'],
        ['d', 'null'],
        ['e', '-1.5e3'],
      ]),
    );
    expect(topLevelValues('{}')).toEqual(new Map());
    for (const bad of ['[]', '"x"', '{"a"}', '{"a":1,}', '{"a":1']) expect(topLevelValues(bad), bad).toBeUndefined();
  });
  it('uses prompt for completions and input for embeddings; leaves model out when there is none', () => {
    expect(JSON.parse(splitRequest({ model: 'a/b', prompt: 'p', max_tokens: 3 }, 'completions', undefined).data)).toEqual({ prompt: 'p' });
    const embeddings = splitRequest({ model: 'a/b', input: ['x'], encoding_format: 'base64', dimensions: 4 }, 'embeddings', 'e');
    expect(JSON.parse(embeddings.data)).toEqual({ input: ['x'], model: 'e' });
    expect(embeddings.configObject).toEqual({ encoding_format: 'base64', dimensions: 4 });
  });
});

describe('answers', () => {
  it('returns a complete answer as the very same text', () => {
    const text = '{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[]}';
    expect(completeAnswer(text, defaults)).toBe(text);
  });
  it('tells from the text alone whether the four head fields are there with their types', () => {
    const head = '"id":"c1","object":"chat.completion","created":1700,"model":"m"';
    expect(hasAnswerHead(`{${head},"choices":[{"index":0}]}`)).toBe(true);
    expect(hasAnswerHead(` {\n "choices": [{"id": "x", "model": "y"}], ${head.replace(/,/g, ', ')} }`)).toBe(true);
    expect(hasAnswerHead(`{"choices":[{"id":"c1","object":"x","created":1,"model":"m"}]}`)).toBe(false);
    expect(hasAnswerHead(`{${head.replace('1700', '"1700"')}}`)).toBe(false);
    expect(hasAnswerHead(`{${head.replace('"id":"c1"', '"id":null')}}`)).toBe(false);
    expect(hasAnswerHead(`{${head.replace('"id"', '"\\u0069d"')}}`)).toBe(false);
    for (const bad of ['', '[]', '"x"', '{', '{"id":"a"', `{${head}`.slice(0, 20)]) expect(hasAnswerHead(bad), bad).toBe(false);
    // Whatever the scan says, the result is the answer parsing would give.
    expect(completeAnswer(`{${head.replace('1700', '"1700"')}}`, defaults)).toBe(
      JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1700, model: 'm' }),
    );
  });
  it('fills id, object, created and model when missing', () => {
    expect(JSON.parse(completeAnswer('{"choices":[]}', defaults))).toEqual({
      choices: [],
      id: 'chatcmpl-r1',
      object: 'chat.completion',
      created: 1700,
      model: 'demo/echo',
    });
  });
  it('turns a complete answer into chunks the SDK stream helpers accept', () => {
    const answer = {
      id: 'x',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      usage: { total_tokens: 3 },
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
        },
      ],
    };
    const events = sseData(wholeAnswerAsEvents(JSON.stringify(answer), { ...defaults, includeUsage: true })).map((e) => JSON.parse(e));
    expect(events).toEqual([
      {
        id: 'x',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        usage: null,
        choices: [
          {
            index: 0,
            logprobs: null,
            finish_reason: null,
            delta: {
              role: 'assistant',
              content: '',
              tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
            },
          },
        ],
      },
      {
        id: 'x',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        usage: null,
        choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }],
      },
      { id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { total_tokens: 3 } },
    ]);
  });
  it('merges chunks given to a non-streaming request into one completion', () => {
    const chunk = (delta: object, finish: string | null = null) =>
      JSON.stringify({
        id: 'c',
        created: 5,
        model: 'm',
        object: 'chat.completion.chunk',
        choices: [{ index: 0, delta, finish_reason: finish }],
      });
    const merged = JSON.parse(
      mergeChunks(
        [
          chunk({ role: 'assistant', content: '' }),
          chunk({ content: 'Hel' }),
          chunk({ content: 'lo', tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'f', arguments: '{"a"' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, 'tool_calls'),
          JSON.stringify({ id: 'c', choices: [], usage: { total_tokens: 2 } }),
        ],
        defaults,
      ),
    );
    expect(merged).toEqual({
      id: 'c',
      created: 5,
      model: 'm',
      object: 'chat.completion',
      usage: { total_tokens: 2 },
      choices: [
        {
          index: 0,
          logprobs: null,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: 'Hello',
            refusal: null,
            tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
          },
        },
      ],
    });
  });
});

describe('embeddings', () => {
  it('encodes float arrays as base64 little-endian float32 when base64 was asked, and back', () => {
    const vector = [0.5, -0.25, 1, 0.125];
    const b64 = floatsToBase64(vector);
    expect(Buffer.from(b64, 'base64')).toEqual(Buffer.from(new Float32Array(vector).buffer));
    expect(base64ToFloats(b64)).toEqual(vector);
    const answer = JSON.stringify({
      object: 'list',
      model: 'm',
      data: [
        { object: 'embedding', index: 1, embedding: [1] },
        { object: 'embedding', index: 0, embedding: vector },
      ],
    });
    const asked = JSON.parse(encodeEmbeddings(answer, 'base64', defaults));
    expect(asked.data.map((d: any) => [d.index, d.embedding])).toEqual([
      [0, b64],
      [1, floatsToBase64([1])],
    ]);
    expect(JSON.parse(encodeEmbeddings(JSON.stringify(asked), 'float', defaults)).data[0].embedding).toEqual(vector);
  });
  it('keeps the text when it already matches', () => {
    const text = '{"object":"list","model":"m","data":[{"object":"embedding","index":0,"embedding":[1,2]}]}';
    expect(encodeEmbeddings(text, 'float', defaults)).toBe(text);
  });
});

describe('stream helpers', () => {
  it('keeps JSON on one line', () => {
    expect(oneLine('{\n  "a": 1,\r\n  "b": "x"\n}')).toBe('{   "a": 1,   "b": "x" }');
    const flat = '{"a":1}';
    expect(oneLine(flat)).toBe(flat);
  });
  it('finds the usage object without parsing the answer, and merges Anthropic usage', () => {
    expect(findUsage('{"choices":[{"delta":{"content":"\\"usage\\": {1}"}}],"usage":{"prompt_tokens":1,"d":{"x":"}"}}}')).toEqual({
      prompt_tokens: 1,
      d: { x: '}' },
    });
    expect(findUsage('{"usage":null}')).toBeUndefined();
    expect(findUsage('{"choices":[]}')).toBeUndefined();
    expect(mergeUsage(mergeUsage(undefined, { input_tokens: 7, output_tokens: 1 }), { output_tokens: 5 })).toEqual({
      input_tokens: 7,
      output_tokens: 5,
    });
  });
  it('frames Anthropic events by their type, or from the {event, data} form', () => {
    const state = { stopped: false };
    expect(anthropicEvent('{"type":"ping"}', state)).toBe('event: ping\ndata: {"type":"ping"}\n\n');
    expect(anthropicEvent('{"index":0,"type":"content_block_stop"}', state)).toBe(
      'event: content_block_stop\ndata: {"index":0,"type":"content_block_stop"}\n\n',
    );
    expect(anthropicEvent('[1]', state)).toBe('');
    expect(state.stopped).toBe(false);
    expect(anthropicEvent('{"event":"message_stop","data":{"type":"message_stop"}}', state)).toBe(
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    );
    expect(state.stopped).toBe(true);
  });
  it('turns a complete Message into the Anthropic event sequence', () => {
    const events = anthropicMessageAsEvents(
      JSON.stringify({
        id: 'm',
        type: 'message',
        role: 'assistant',
        model: 'c',
        content: [
          { type: 'text', text: 'hi' },
          { type: 'tool_use', id: 't', name: 'f', input: { a: 1 } },
        ],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 2 },
      }),
    );
    const names = [...events.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(names).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events).toContain('"partial_json":"{\\"a\\":1}"');
  });

  it('mean-pools per-token embeddings, and refuses tokens that are not finite vectors of one length', () => {
    expect(
      meanPool([
        [1, 2],
        [3, 6],
      ]),
    ).toEqual([2, 4]);
    expect(() => meanPool([[1, 2], [3]])).toThrow(/per-token embeddings/);
    expect(() => meanPool([[1, Number.NaN]])).toThrow(/per-token embeddings/);
  });
});
