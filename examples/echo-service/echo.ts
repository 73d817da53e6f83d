/**
 * The model behind the demo echo service: answers in OpenAI's formats with the caller's own words.
 * Pure functions of the predict data and config the standard chat adapter sends (its split rule):
 * chat `{model, messages, stream}`, completions `{model, prompt, stream}`, embeddings `{model, input}`,
 * with every other request field in the config. A streamed answer is an async iterable of chunks,
 * each one partial answer.
 */
import { createHash } from 'node:crypto';

type Json = Record<string, unknown>;

export interface EchoRequest {
  model?: string;
  messages?: unknown[];
  prompt?: unknown;
  input?: unknown;
  stream?: boolean | null;
  stream_options?: unknown;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Text of a message's content: a string, or the text parts of an array. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

/** Words with their trailing space: the pieces a streamed answer is cut into. */
const pieces = (text: string): string[] => text.match(/\S+\s*/g) ?? [];
const WHITESPACE = /\s/;

/** The number of pieces() of the text, counted without building them (the usage of every answer). */
function countWords(text: string): number {
  let words = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = c < 128 ? c === 32 || (c >= 9 && c <= 13) : WHITESPACE.test(text[i]!);
    if (!space && !inWord) words++;
    inWord = !space;
  }
  return words;
}

let counter = 0;
const nextId = (prefix: string): string => `${prefix}-echo-${Date.now().toString(36)}-${(++counter).toString(36)}`;

/**
 * `stream_options.include_usage`: in the config through the standard adapter (its split rule), in the
 * data through the direct adapter (the caller's whole body is the data there).
 */
function includeUsage(config: Json, data: Json = {}): boolean {
  const options = isObject(config.stream_options) ? config.stream_options : data.stream_options;
  return isObject(options) && options.include_usage === true;
}

/** What kind of request the data is, by its fields. */
export function requestKind(data: EchoRequest): 'chat' | 'completions' | 'embeddings' | undefined {
  if (Array.isArray(data.messages)) return 'chat';
  if (data.prompt !== undefined) return 'completions';
  if (data.input !== undefined) return 'embeddings';
  return undefined;
}

/** The answer to any of the three request kinds; throws on data of none of them. */
export function echoAnswer(data: EchoRequest, config: Json = {}): Json | AsyncIterable<Json> {
  switch (requestKind(data)) {
    case 'chat':
      return echoChat(data, config);
    case 'completions':
      return echoCompletion(data, config);
    case 'embeddings':
      return echoEmbeddings(data, config);
    default:
      throw new TypeError('expected chat data (messages), completion data (prompt) or embeddings data (input)');
  }
}

/**
 * A `chat.completion` whose assistant text is `Echo: <last user message>`, or, when `stream` is true,
 * the same text as `chat.completion.chunk`s: role first, one word per chunk, the finish reason, and
 * the usage chunk when `stream_options.include_usage` is set.
 */
export function echoChat(data: EchoRequest, config: Json = {}): Json | AsyncIterable<Json> {
  const messages = (data.messages ?? []).filter(isObject);
  let lastUser: Json | undefined;
  for (let i = messages.length - 1; i >= 0 && !lastUser; i--) if (messages[i]!.role === 'user') lastUser = messages[i];
  const text = `Echo: ${contentText(lastUser?.content)}`;
  const promptTokens = messages.reduce((n, m) => n + countWords(contentText(m.content)), 0);
  const completionTokens = countWords(text);
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  const head = { id: nextId('chatcmpl'), created: Math.floor(Date.now() / 1000), model: data.model ?? 'echo' };
  if (data.stream !== true) {
    return {
      ...head,
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage,
    };
  }
  const withUsage = includeUsage(config, data as Json);
  const chunk = (delta: Json, finish: string | null): Json => ({
    ...head,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(withUsage ? { usage: null } : {}),
  });
  return (async function* stream() {
    yield chunk({ role: 'assistant', content: '' }, null);
    for (const piece of pieces(text)) yield chunk({ content: piece }, null);
    yield chunk({}, 'stop');
    if (withUsage) yield { ...head, object: 'chat.completion.chunk', choices: [], usage };
  })();
}

/** A `text_completion` of `Echo: <prompt>`; streamed as text-completion chunks when asked. */
export function echoCompletion(data: EchoRequest, config: Json = {}): Json | AsyncIterable<Json> {
  const prompt = Array.isArray(data.prompt) ? data.prompt.map(String).join('\n') : String(data.prompt ?? '');
  const text = `Echo: ${prompt}`;
  const promptTokens = countWords(prompt);
  const completionTokens = countWords(text);
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  const head = { id: nextId('cmpl'), object: 'text_completion', created: Math.floor(Date.now() / 1000), model: data.model ?? 'echo' };
  if (data.stream !== true) {
    return { ...head, choices: [{ text, index: 0, logprobs: null, finish_reason: 'stop' }], usage };
  }
  const withUsage = includeUsage(config, data as Json);
  return (async function* stream() {
    const parts = pieces(text);
    for (let i = 0; i < parts.length; i++) {
      yield { ...head, choices: [{ text: parts[i], index: 0, logprobs: null, finish_reason: i === parts.length - 1 ? 'stop' : null }] };
    }
    if (withUsage) yield { ...head, choices: [], usage };
  })();
}

/**
 * Deterministic embeddings: each input's vector comes from the SHA-256 of its JSON text, one value per
 * byte in [-1, 1), exactly representable as float32 so a base64 round trip is lossless. The length
 * is `dimensions` from the config (default 8, at most 256).
 */
export function echoEmbeddings(data: EchoRequest, config: Json = {}): Json {
  const inputs = Array.isArray(data.input) && !data.input.every((v) => typeof v === 'number') ? data.input : [data.input];
  const dimensions = Math.min(256, typeof config.dimensions === 'number' && config.dimensions > 0 ? Math.floor(config.dimensions) : 8);
  let tokens = 0;
  const embeddings = inputs.map((input, index) => {
    tokens += typeof input === 'string' ? countWords(input) : Array.isArray(input) ? input.length : 1;
    return { object: 'embedding', index, embedding: deterministicVector(JSON.stringify(input), dimensions) };
  });
  return { object: 'list', data: embeddings, model: data.model ?? 'echo', usage: { prompt_tokens: tokens, total_tokens: tokens } };
}

export function deterministicVector(text: string, dimensions: number): number[] {
  const out: number[] = [];
  let block = 0;
  while (out.length < dimensions) {
    const digest = createHash('sha256').update(`${block++}:${text}`).digest();
    for (const byte of digest) {
      if (out.length === dimensions) break;
      out.push((byte - 128) / 128);
    }
  }
  return out;
}

/**
 * The ext call `count_tokens` (the adapters' `v1/messages/count_tokens`): the echo model's tokens are
 * words, so the count is the words of every message's text (string content or text parts) and of a
 * `system` prompt, the same count its answers report as prompt tokens.
 */
export function countPromptTokens(request: Json): { input_tokens: number } {
  let tokens = 0;
  if (typeof request.system === 'string') tokens += countWords(request.system);
  else if (Array.isArray(request.system)) tokens += countWords(contentText(request.system));
  for (const message of Array.isArray(request.messages) ? request.messages : []) {
    if (isObject(message)) tokens += countWords(contentText(message.content));
  }
  return { input_tokens: tokens };
}
