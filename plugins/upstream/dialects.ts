/**
 * The HTTP APIs engines speak: OpenAI's (chat/completions, completions, embeddings: vLLM,
 * Ollama, llama.cpp, TGI, LiteLLM, OpenAI itself; and its Responses API, for engines that speak it)
 * and Anthropic's Messages. Each says where a body
 * goes, how to authenticate, what one event of a streamed answer means, and how to read an error.
 */
import { gatewayError, type ApiErrorProto } from '../../core/plugins/index.js';
import { engineError, type EngineHeaders } from './engine-error.js';
import { isObject, type Json } from './engine-request.js';
import type { SseEvent } from './sse.js';

/** What one event of a streamed answer is. */
export type StreamStep =
  | { readonly kind: 'chunk'; readonly json: string; readonly last: boolean }
  | { readonly kind: 'end' }
  | { readonly kind: 'error'; readonly error: ApiErrorProto }
  /** Not what the API sends: the engine answered garbage. */
  | { readonly kind: 'bad'; readonly reason: string };

export interface Dialect {
  /** The path under the base URL for a body. */
  path(body: Json): string;
  /** The authentication headers for a key. */
  auth(apiKey: string): Record<string, string>;
  /** Headers every request carries (API versions). */
  readonly headers: Readonly<Record<string, string>>;
  /** Headers of the caller's request passed on to the engine, over `headers` (API version, betas). */
  readonly passedHeaders: readonly string[];
  /** Where the engine counts a request's tokens (the ext call `count_tokens`); none: it cannot. */
  readonly countTokensPath?: string;
  event(event: SseEvent): StreamStep;
  /** The engine's non-2xx answer as a service error relayed exactly (engine-error.ts). */
  error(status: number, text: string, headers: EngineHeaders): ApiErrorProto;
  /** What ends a complete stream, for the error of one cut off before it. */
  readonly streamEnd: string;
}

const END: StreamStep = { kind: 'end' };

/** A cheap check that an event's data is one JSON object, without parsing every token chunk. */
const looksLikeObject = (data: string) => data.startsWith('{') && data.trimEnd().endsWith('}');

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

const badEvent = (reason: string): StreamStep => ({ kind: 'bad', reason });

export const openAiDialect: Dialect = {
  path(body) {
    if (Array.isArray(body.messages)) return '/chat/completions';
    if (body.prompt !== undefined) return '/completions';
    if (body.input !== undefined) return '/embeddings';
    throw gatewayError('VALIDATION_FAILED', {
      param: 'data',
      args: { reason: 'expected a chat (messages), completion (prompt) or embeddings (input) request' },
    });
  },
  auth: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
  headers: {},
  passedHeaders: [],
  event({ data }) {
    if (data === '[DONE]') return END;
    if (!looksLikeObject(data)) return badEvent(`a stream event is not a JSON object: ${data.slice(0, 80)}`);
    if (data.startsWith('{"error"')) return { kind: 'error', error: openAiError(502, data, {}, 'the engine reported an error mid-stream') };
    return { kind: 'chunk', json: data, last: false };
  },
  error: (status, text, headers) => openAiError(status, text, headers, text.slice(0, 500) || `the engine answered ${status}`),
  streamEnd: '[DONE]',
};

/** The Responses stream's terminal events: the last one an engine sends (it sends no `[DONE]`). */
const RESPONSES_TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);
const LEADING_TYPE = /^\{\s*"type"\s*:\s*"([A-Za-z0-9_.-]+)"/;

/**
 * OpenAI's Responses API (`POST /responses`), for a service that speaks it itself (`nativeResponses`):
 * the caller's body goes to the engine as it is, and each typed event of its stream is relayed, the
 * terminal one (`response.completed`, `.incomplete`, `.failed`) last. An `error` event is the
 * engine's error, relayed as a chat engine's mid-stream error is.
 */
export const openAiResponsesDialect: Dialect = {
  ...openAiDialect,
  path: () => '/responses',
  event({ event, data }) {
    if (!looksLikeObject(data)) return badEvent(`a stream event is not a JSON object: ${data.slice(0, 80)}`);
    const type = event ?? LEADING_TYPE.exec(data)?.[1] ?? stringOr(errorOrSelf(parse(data)).type);
    if (type === 'error') return { kind: 'error', error: responsesStreamError(data) };
    return { kind: 'chunk', json: data, last: type !== undefined && RESPONSES_TERMINAL.has(type) };
  },
  streamEnd: 'response.completed',
};

const errorOrSelf = (body: unknown): Json => (isObject(body) ? body : {});

/** A Responses `error` event: `{type: "error", code, message, param}` (some engines nest them in `error`). */
function responsesStreamError(data: string): ApiErrorProto {
  const body = errorOrSelf(parse(data));
  const error = isObject(body.error) ? body.error : body;
  const fields = {
    message: stringOr(error.message) ?? 'the engine reported an error mid-stream',
    code: stringOr(error.code),
    param: stringOr(error.param),
  };
  return engineError('openai', 502, error === body ? fields : { ...fields, type: stringOr(error.type) }, {});
}

/** OpenAI's error body `{error: {message, type, param, code}}` (some engines send the inner object alone). */
function openAiError(status: number, text: string, headers: EngineHeaders, fallback: string): ApiErrorProto {
  const body = parse(text);
  const error = isObject(body) ? (isObject(body.error) ? body.error : body) : {};
  return engineError(
    'openai',
    status,
    {
      message: stringOr(error.message) ?? fallback,
      type: stringOr(error.type),
      code: stringOr(error.code),
      param: stringOr(error.param),
    },
    headers,
  );
}

/** HTTP status of an Anthropic error that arrives as a stream event (after the engine's 200). */
const ANTHROPIC_EVENT_STATUS: Record<string, number> = {
  overloaded_error: 529,
  rate_limit_error: 429,
  api_error: 500,
  invalid_request_error: 400,
  request_too_large: 413,
  timeout_error: 504,
};

export const anthropicDialect: Dialect = {
  path: () => '/v1/messages',
  auth: (apiKey) => ({ 'x-api-key': apiKey }),
  headers: { 'anthropic-version': '2023-06-01' },
  passedHeaders: ['anthropic-version', 'anthropic-beta'],
  countTokensPath: '/v1/messages/count_tokens',
  event({ event, data }) {
    if (!looksLikeObject(data)) return badEvent(`a stream event is not a JSON object: ${data.slice(0, 80)}`);
    if (event === 'error') {
      const type = stringOr(errorOf(parse(data)).type);
      return {
        kind: 'error',
        error: anthropicError(ANTHROPIC_EVENT_STATUS[type ?? ''] ?? 500, data, {}, 'the engine reported an error mid-stream'),
      };
    }
    return { kind: 'chunk', json: data, last: event === 'message_stop' };
  },
  error: (status, text, headers) => anthropicError(status, text, headers, text.slice(0, 500) || `the engine answered ${status}`),
  streamEnd: 'message_stop',
};

const errorOf = (body: unknown): Json => (isObject(body) && isObject(body.error) ? body.error : {});

/** Anthropic's error body `{type: "error", error: {type, message}}`. */
function anthropicError(status: number, text: string, headers: EngineHeaders, fallback: string): ApiErrorProto {
  const error = errorOf(parse(text));
  return engineError('anthropic', status, { message: stringOr(error.message) ?? fallback, type: stringOr(error.type) }, headers);
}

function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export const DIALECTS = { openai: openAiDialect, anthropic: anthropicDialect } as const;
