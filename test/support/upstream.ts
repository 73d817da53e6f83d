/**
 * Real local HTTP engines with canned model answers, behind the upstream connector: an
 * OpenAI-compatible API (chat completions with and without tool calls, legacy completions,
 * embeddings; streamed and not) and an Anthropic Messages API. Every request is recorded.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface UpstreamRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface Upstream {
  url: string;
  requests: UpstreamRequest[];
  close(): Promise<void>;
}

type Json = Record<string, any>;

const lastUserText = (messages: any[]): string => {
  const last = [...(messages ?? [])].reverse().find((m) => m.role === 'user');
  if (!last) return '';
  return typeof last.content === 'string' ? last.content : last.content.map((p: any) => p.text ?? '').join('');
};

const sse = (res: http.ServerResponse, frames: string[]) => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const frame of frames) res.write(frame);
  res.end();
};

export async function startUpstream(handle: (req: UpstreamRequest, res: http.ServerResponse) => void): Promise<Upstream> {
  const requests: UpstreamRequest[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => {
      const recorded = { path: req.url ?? '', headers: req.headers, body: text ? JSON.parse(text) : undefined };
      requests.push(recorded);
      handle(recorded, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What a model asked for JSON answers (`response_format` json_schema or json_object). */
export const STRUCTURED_REPLY = '{"city":"Paris","temp_c":21}';

/**
 * Errors as a real OpenAI-compatible engine sends them, by the last user text: status, body and the
 * headers clients read (retry-after, rate limits, the engine's request id).
 */
export const ENGINE_FAILURES: Record<string, { status: number; headers: Record<string, string>; body: Json }> = {
  'rate-limited': {
    status: 429,
    headers: {
      'retry-after': '7',
      'retry-after-ms': '6500',
      'x-ratelimit-limit-requests': '100',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '6.5s',
      'x-request-id': 'req_engine_429',
    },
    body: {
      error: {
        message: 'Rate limit reached for requests per min (RPM): Limit 100, Used 100',
        type: 'requests',
        param: null,
        code: 'rate_limit_exceeded',
      },
    },
  },
  'bad-param': {
    status: 400,
    headers: { 'x-request-id': 'req_engine_400' },
    body: {
      error: {
        message: "Invalid value for 'temperature': must be at most 2.",
        type: 'invalid_request_error',
        param: 'temperature',
        code: 'invalid_value',
      },
    },
  },
  'server-error': {
    status: 500,
    headers: { 'x-request-id': 'req_engine_500' },
    body: { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } },
  },
};

/** The same failures as an Anthropic Messages upstream sends them. */
export const ANTHROPIC_FAILURES: Record<string, { status: number; headers: Record<string, string>; body: Json }> = {
  'rate-limited': {
    status: 429,
    headers: { 'retry-after': '9', 'anthropic-ratelimit-requests-remaining': '0', 'request-id': 'req_anthropic_429' },
    body: { type: 'error', error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit.' } },
  },
  'bad-param': {
    status: 400,
    headers: { 'request-id': 'req_anthropic_400' },
    body: { type: 'error', error: { type: 'invalid_request_error', message: 'temperature: range: 0..1' } },
  },
  'server-error': {
    status: 500,
    headers: { 'request-id': 'req_anthropic_500' },
    body: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } },
  },
};

const TOOL_CALL = { id: 'call_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };

/**
 * An OpenAI-compatible upstream at `<url>/v1`. Asking for tools gets a tool call; `upstream-error` a 429;
 * a last user text `think:<x>` an answer with `reasoning_content` (streamed in two deltas).
 */
export function startOpenAiUpstream(): Promise<Upstream> {
  return startUpstream(({ path, body }, res) => {
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (path === '/v1/models')
      return json(200, { object: 'list', data: [{ id: 'engine-default', object: 'model', owned_by: 'upstream' }] });
    const head = { id: 'chatcmpl-upstream-1', created: 1_700_000_000, model: body.model, system_fingerprint: 'fp_up' };
    const usage = { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 };
    if (path === '/v1/chat/completions') {
      const text = lastUserText(body.messages);
      if (text === 'upstream-error')
        return json(429, {
          error: { message: 'upstream quota exhausted', type: 'insufficient_quota', param: null, code: 'insufficient_quota' },
        });
      const failure = ENGINE_FAILURES[text];
      if (failure) {
        res.writeHead(failure.status, { 'content-type': 'application/json', ...failure.headers });
        return res.end(JSON.stringify(failure.body));
      }
      // After a tool call the model answers with the tool's output; asked for JSON it answers JSON.
      const last = body.messages?.at(-1);
      const toolResult = last?.role === 'tool' ? String(last.content) : undefined;
      const structured = body.response_format?.type === 'json_schema' || body.response_format?.type === 'json_object';
      const tools = toolResult === undefined && Array.isArray(body.tools) && body.tools.length > 0;
      const reply = toolResult !== undefined ? `The tool said: ${toolResult}` : structured ? STRUCTURED_REPLY : `Upstream heard: ${text}`;
      // A reasoning model (vLLM, DeepSeek, llama.cpp): `think:` asks for reasoning_content before the answer.
      const reasoning = text.startsWith('think:') ? `Thinking about ${text.slice(6)}` : undefined;
      if (!body.stream) {
        const message = tools
          ? { role: 'assistant', content: null, refusal: null, tool_calls: [TOOL_CALL] }
          : { role: 'assistant', content: reply, refusal: null, ...(reasoning ? { reasoning_content: reasoning } : {}) };
        return json(200, {
          ...head,
          object: 'chat.completion',
          choices: [{ index: 0, message, logprobs: null, finish_reason: tools ? 'tool_calls' : 'stop' }],
          usage,
        });
      }
      const withUsage = body.stream_options?.include_usage === true;
      const chunk = (delta: Json, finish: string | null) =>
        `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(withUsage ? { usage: null } : {}) })}\n\n`;
      const frames = tools
        ? [
            chunk(
              {
                role: 'assistant',
                content: null,
                tool_calls: [{ index: 0, id: TOOL_CALL.id, type: 'function', function: { name: 'get_weather', arguments: '' } }],
              },
              null,
            ),
            chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, null),
            chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }, null),
            chunk({}, 'tool_calls'),
          ]
        : [
            chunk({ role: 'assistant', content: '' }, null),
            ...(reasoning
              ? [chunk({ reasoning_content: reasoning.slice(0, 9) }, null), chunk({ reasoning_content: reasoning.slice(9) }, null)]
              : []),
            chunk({ content: reply.slice(0, 16) }, null),
            chunk({ content: reply.slice(16) }, null),
            chunk({}, 'stop'),
          ];
      // A cut-off stream: the engine stops after two chunks, with no finish_reason and no [DONE].
      if (text === 'cut-off') return sse(res, frames.slice(0, 2));
      if (withUsage) frames.push(`data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
      frames.push('data: [DONE]\n\n');
      return sse(res, frames);
    }
    if (path === '/v1/completions') {
      const done = {
        ...head,
        id: 'cmpl-upstream-1',
        object: 'text_completion',
        choices: [{ text: ` after ${body.prompt}`, index: 0, logprobs: null, finish_reason: 'stop' }],
        usage,
      };
      if (!body.stream) return json(200, done);
      return sse(res, [`data: ${JSON.stringify(done)}\n\n`, 'data: [DONE]\n\n']);
    }
    if (path === '/v1/embeddings') {
      const inputs = Array.isArray(body.input) ? body.input : [body.input];
      return json(200, {
        object: 'list',
        model: body.model,
        data: inputs.map((_: unknown, index: number) => ({ object: 'embedding', index, embedding: [0.5, -0.25, index] })),
        usage: { prompt_tokens: 2, total_tokens: 2 },
      });
    }
    json(404, { error: { message: `no route ${path}`, type: 'invalid_request_error' } });
  });
}

const named = (event: string, data: Json) => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;

/**
 * An Anthropic Messages upstream at `<url>/v1/messages`. The last user text `upstream-error` gets a
 * 529 overloaded_error; `stream-error` an `event: error` after the first events.
 */
export function startAnthropicUpstream(): Promise<Upstream> {
  return startUpstream(({ path, body }, res) => {
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (path === '/v1/messages/count_tokens') {
      // The upstream's own count (here: characters of the messages' JSON, a number no gateway could guess).
      return json(200, { input_tokens: JSON.stringify(body.messages).length });
    }
    if (path !== '/v1/messages') return json(404, { type: 'error', error: { type: 'not_found_error', message: `no route ${path}` } });
    const text = lastUserText(body.messages);
    if (text === 'upstream-error') return json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    const failure = ANTHROPIC_FAILURES[text];
    if (failure) {
      res.writeHead(failure.status, { 'content-type': 'application/json', ...failure.headers });
      return res.end(JSON.stringify(failure.body));
    }
    const reply = `Claude heard: ${text}`;
    const message = {
      id: 'msg_upstream_1',
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: [{ type: 'text', text: reply }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 7, output_tokens: 5 },
    };
    if (!body.stream) return json(200, message);
    const frames = [
      named('message_start', { message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 7, output_tokens: 1 } } }),
      named('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      named('ping', {}),
      named('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Claude heard: ' } }),
    ];
    // A cut-off stream: the upstream stops mid-answer, with no message_delta and no message_stop.
    if (text === 'cut-off') return sse(res, frames);
    if (text === 'stream-error') {
      frames.push(named('error', { error: { type: 'overloaded_error', message: 'Overloaded mid-stream' } }));
      return sse(res, frames);
    }
    frames.push(
      named('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
      named('content_block_stop', { index: 0 }),
      named('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } }),
      named('message_stop', {}),
    );
    sse(res, frames);
  });
}

export interface ScriptedEngine {
  /** `<origin>/v1` */
  url: string;
  /** Paths of requests whose responses closed before they were finished (aborted by the gateway). */
  closed: string[];
  /** Every request, in order. */
  requests: UpstreamRequest[];
  close(): Promise<void>;
}

/** An engine answering every request per `behave`, recording requests and the ones cut short. */
export async function startScriptedEngine(
  behave: (req: http.IncomingMessage, res: http.ServerResponse, body: any) => void,
): Promise<ScriptedEngine> {
  const closed: string[] = [];
  const requests: UpstreamRequest[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => {
      const body = text ? JSON.parse(text) : undefined;
      requests.push({ path: req.url ?? '', headers: req.headers, body });
      behave(req, res, body);
    });
    res.on('close', () => {
      if (!res.writableFinished) closed.push(req.url ?? '');
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    closed,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const chatCompletion = (content: string) =>
  JSON.stringify({
    id: 'c1',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
  });

/** An OpenAI-compatible engine that answers every chat completion with `content`, holding each answer while `state.held` is true. */
export async function engineSaying(
  content: string,
  state: { held: boolean } = { held: false },
): Promise<ScriptedEngine & { release(): void }> {
  const waiting: (() => void)[] = [];
  const engine = await startScriptedEngine((_req, res) => {
    const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end(chatCompletion(content));
    if (state.held) waiting.push(answer);
    else answer();
  });
  return {
    ...engine,
    release: () => {
      state.held = false;
      for (const answer of waiting.splice(0)) answer();
    },
  };
}
