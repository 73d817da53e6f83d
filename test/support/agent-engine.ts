/**
 * A scripted engine for the coding-agent tests, speaking both wire families on one port: OpenAI
 * Chat Completions (`/v1/chat/completions`) and Anthropic Messages (`/v1/messages`), whole or
 * streamed, and the Responses API (`/v1/responses`, `responsesAnswer`). A conversation whose last turn is not a tool result gets a call of the agent's
 * file-reading tool on `file` (whichever of the known tools the request offers: Claude Code's
 * `Read`, OpenCode's `read`, Codex's `exec_command`); the turn after the tool ran gets the text
 * `DONE: <the tool's output>`, so an agent that printed it did the whole round trip. Requests that
 * are not the agent's conversation (no tools: titles, summaries) get a short text. `/tokenize` is
 * llama.cpp's (`content` only, here a token per word).
 */
import { startUpstream, type Upstream } from './upstream.js';

type Json = Record<string, any>;

export interface AgentEngine extends Upstream {
  /** The tool calls it made, by tool name. */
  calls: string[];
}

/** The first offered tool it knows, and the arguments that read `file` with it. */
function readCall(tools: { name: string }[], file: string): { name: string; args: Json } | undefined {
  const names = new Set(tools.map((t) => t.name));
  if (names.has('Read')) return { name: 'Read', args: { file_path: file } };
  if (names.has('read')) return { name: 'read', args: { filePath: file } };
  if (names.has('exec_command')) return { name: 'exec_command', args: { cmd: `cat ${file}` } };
  if (names.has('shell')) return { name: 'shell', args: { command: ['cat', file] } };
  return undefined;
}

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content
          .map((p: any) => (typeof p?.text === 'string' ? p.text : typeof p?.content === 'string' ? p.content : textOf(p?.content)))
          .join('')
      : '';

export async function startAgentEngine(file: string): Promise<AgentEngine> {
  const calls: string[] = [];
  let seq = 0;
  const upstream = await startUpstream(({ path, body }, res) => {
    if (path.startsWith('/v1/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ object: 'list', data: [{ id: 'scripted', object: 'model', owned_by: 'test' }] }));
    }
    // llama.cpp's tokenizer: `content` only; a token per word here.
    if (path === '/tokenize') {
      const ok = typeof body?.content === 'string';
      res.writeHead(ok ? 200 : 500, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify(
          ok
            ? {
                tokens: body.content
                  .split(/\s+/)
                  .filter(Boolean)
                  .map((_: string, i: number) => i),
              }
            : { error: { code: 500, message: '"content" must be provided', type: 'server_error' } },
        ),
      );
    }
    // llama.cpp's server without pooling: one vector per token of each input.
    if (path === '/v1/embeddings') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const inputs: string[] = Array.isArray(body.input) ? body.input : [body.input];
      const data = inputs.map((_, index) => ({
        object: 'embedding',
        index,
        embedding: [
          [1, 2, -1],
          [3, 4, -3],
        ],
      }));
      return res.end(JSON.stringify({ object: 'list', model: body.model, data, usage: { prompt_tokens: 2, total_tokens: 2 } }));
    }
    // The Responses API's own family, for the upstream connector's `nativeResponses` route.
    if (path === '/v1/responses') return void answerResponses(res, responsesAnswer(body, file, calls));
    if (path !== '/v1/chat/completions' && !path.startsWith('/v1/messages')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: { message: `no route ${path}`, type: 'not_found' } }));
    }
    const anthropic = path.startsWith('/v1/messages');
    const messages: Json[] = body?.messages ?? [];
    const last = messages.at(-1) ?? {};
    const toolResult = anthropic
      ? Array.isArray(last.content)
        ? last.content.find((b: Json) => b.type === 'tool_result')
        : undefined
      : last.role === 'tool'
        ? last
        : undefined;
    const tools: { name: string }[] = (body?.tools ?? []).map((t: Json) => ({ name: t.name ?? t.function?.name }));
    const call = toolResult ? undefined : readCall(tools, file);
    const text = toolResult ? `DONE: ${textOf(toolResult.content).trim()}` : call ? '' : 'ok';
    if (call) calls.push(call.name);
    const id = `call_scripted_${++seq}`;
    if (anthropic) return answerMessages(res, body, text, call && { id, ...call });
    return answerChat(res, body, text, call && { id, ...call });
  });
  return { ...upstream, calls };
}

type Call = { id: string; name: string; args: Json };

function answerChat(res: import('node:http').ServerResponse, body: Json, text: string, call: Call | undefined): void {
  const head = { id: 'chatcmpl-scripted', created: 1_700_000_000, model: body.model ?? 'scripted' };
  const usage = { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 };
  const toolCall = call && { id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } };
  const finish = call ? 'tool_calls' : 'stop';
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    const message = call ? { role: 'assistant', content: null, tool_calls: [toolCall] } : { role: 'assistant', content: text };
    return void res.end(
      JSON.stringify({ ...head, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage }),
    );
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: Json, finishReason: string | null) =>
    `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
  const frames = call
    ? [chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, ...toolCall }] }, null), chunk({}, finish)]
    : [chunk({ role: 'assistant', content: '' }, null), chunk({ content: text }, null), chunk({}, finish)];
  frames.push(`data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [], usage })}\n\n`, 'data: [DONE]\n\n');
  res.end(frames.join(''));
}

function answerMessages(res: import('node:http').ServerResponse, body: Json, text: string, call: Call | undefined): void {
  const content = call ? [{ type: 'tool_use', id: call.id, name: call.name, input: call.args }] : [{ type: 'text', text }];
  const message = {
    id: 'msg_scripted',
    type: 'message',
    role: 'assistant',
    model: body.model ?? 'scripted',
    content,
    stop_reason: call ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 5 },
  };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify(message));
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const ev = (type: string, data: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const block = call ? { type: 'tool_use', id: call.id, name: call.name, input: {} } : { type: 'text', text: '' };
  const delta = call ? { type: 'input_json_delta', partial_json: JSON.stringify(call.args) } : { type: 'text_delta', text };
  res.end(
    [
      ev('message_start', { message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 20, output_tokens: 1 } } }),
      ev('content_block_start', { index: 0, content_block: block }),
      ev('content_block_delta', { index: 0, delta }),
      ev('content_block_stop', { index: 0 }),
      ev('message_delta', { delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: 5 } }),
      ev('message_stop', {}),
    ].join(''),
  );
}

/**
 * The same script as an engine of the Responses API's own family (a service with `nativeResponses`,
 * here a dial-in raw service): the Responses body in, its typed stream events out (each partial one
 * event's data object). Codex's first request gets an `exec_command` call on `file`, the next (with
 * the call's output in `input`) the text `DONE: <output>`.
 */
export function responsesAnswer(body: Json, file: string, calls: string[]): AsyncIterable<Json> | Json {
  const input: Json[] = Array.isArray(body.input) ? body.input : [];
  const output = [...input].reverse().find((item) => item.type === 'function_call_output');
  const names = new Set<string>((body.tools ?? []).map((t: Json) => t.name));
  const call = !output && names.has('exec_command') ? { name: 'exec_command', args: { cmd: `cat ${file}` } } : undefined;
  if (call) calls.push(call.name);
  const text = output ? `DONE: ${textOf(output.output).trim()}` : 'ok';
  const item = call
    ? {
        id: 'fc_scripted',
        type: 'function_call',
        status: 'completed',
        call_id: `call_native_${calls.length}`,
        name: call.name,
        arguments: JSON.stringify(call.args),
      }
    : {
        id: 'msg_scripted',
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text, annotations: [] }],
      };
  const response = {
    id: `resp_scripted_${calls.length}_${output ? 'b' : 'a'}`,
    object: 'response',
    created_at: 1,
    model: body.model,
    status: 'in_progress',
    output: [] as Json[],
    usage: null as Json | null,
  };
  const done = {
    ...response,
    status: 'completed',
    output: [item],
    usage: {
      input_tokens: 20,
      output_tokens: 5,
      total_tokens: 25,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
    },
  };
  if (!body.stream) return done;
  return (async function* events() {
    let sequence_number = 0;
    yield { type: 'response.created', sequence_number: sequence_number++, response };
    yield {
      type: 'response.output_item.added',
      sequence_number: sequence_number++,
      output_index: 0,
      item: { ...item, status: 'in_progress' },
    };
    yield { type: 'response.output_item.done', sequence_number: sequence_number++, output_index: 0, item };
    yield { type: 'response.completed', sequence_number: sequence_number++, response: done };
  })();
}

/** A Responses answer over HTTP: the response object, or its events as typed SSE. */
async function answerResponses(res: import('node:http').ServerResponse, answer: AsyncIterable<Json> | Json): Promise<void> {
  if (!(Symbol.asyncIterator in answer)) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify(answer));
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for await (const event of answer as AsyncIterable<Json>) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  res.end();
}
