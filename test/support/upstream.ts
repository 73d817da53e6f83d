/**
 * Real local HTTP upstreams with canned model answers, for the proxy example services: an
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
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

const TOOL_CALL = { id: 'call_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };

/** An OpenAI-compatible upstream at `<url>/v1`. Asking for tools gets a tool call; `upstream-error` a 429. */
export function startOpenAiUpstream(): Promise<Upstream> {
  return startUpstream(({ path, body }, res) => {
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    const head = { id: 'chatcmpl-upstream-1', created: 1_700_000_000, model: body.model, system_fingerprint: 'fp_up' };
    const usage = { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 };
    if (path === '/v1/chat/completions') {
      const text = lastUserText(body.messages);
      if (text === 'upstream-error') return json(429, { error: { message: 'upstream quota exhausted', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } });
      const tools = Array.isArray(body.tools) && body.tools.length > 0;
      if (!body.stream) {
        const message = tools
          ? { role: 'assistant', content: null, refusal: null, tool_calls: [TOOL_CALL] }
          : { role: 'assistant', content: `Upstream heard: ${text}`, refusal: null };
        return json(200, { ...head, object: 'chat.completion', choices: [{ index: 0, message, logprobs: null, finish_reason: tools ? 'tool_calls' : 'stop' }], usage });
      }
      const withUsage = body.stream_options?.include_usage === true;
      const chunk = (delta: Json, finish: string | null) => `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(withUsage ? { usage: null } : {}) })}\n\n`;
      const frames = tools
        ? [
          chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: TOOL_CALL.id, type: 'function', function: { name: 'get_weather', arguments: '' } }] }, null),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, null),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }, null),
          chunk({}, 'tool_calls'),
        ]
        : [chunk({ role: 'assistant', content: '' }, null), chunk({ content: 'Upstream heard: ' }, null), chunk({ content: text }, null), chunk({}, 'stop')];
      if (withUsage) frames.push(`data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
      frames.push('data: [DONE]\n\n');
      return sse(res, frames);
    }
    if (path === '/v1/completions') {
      const done = { ...head, id: 'cmpl-upstream-1', object: 'text_completion', choices: [{ text: ` after ${body.prompt}`, index: 0, logprobs: null, finish_reason: 'stop' }], usage };
      if (!body.stream) return json(200, done);
      return sse(res, [`data: ${JSON.stringify(done)}\n\n`, 'data: [DONE]\n\n']);
    }
    if (path === '/v1/embeddings') {
      const inputs = Array.isArray(body.input) ? body.input : [body.input];
      return json(200, { object: 'list', model: body.model, data: inputs.map((_: unknown, index: number) => ({ object: 'embedding', index, embedding: [0.5, -0.25, index] })), usage: { prompt_tokens: 2, total_tokens: 2 } });
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
    if (path !== '/v1/messages') return json(404, { type: 'error', error: { type: 'not_found_error', message: `no route ${path}` } });
    const text = lastUserText(body.messages);
    if (text === 'upstream-error') return json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    const reply = `Claude heard: ${text}`;
    const message = { id: 'msg_upstream_1', type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text: reply }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 7, output_tokens: 5 } };
    if (!body.stream) return json(200, message);
    const frames = [
      named('message_start', { message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 7, output_tokens: 1 } } }),
      named('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      named('ping', {}),
      named('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Claude heard: ' } }),
    ];
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
export async function startScriptedEngine(behave: (req: http.IncomingMessage, res: http.ServerResponse, body: any) => void): Promise<ScriptedEngine> {
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
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
