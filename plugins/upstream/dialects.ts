/**
 * The two HTTP APIs engines speak: OpenAI's (chat/completions, completions, embeddings: vLLM,
 * Ollama, llama.cpp, TGI, LiteLLM, OpenAI itself) and Anthropic's Messages. Each says where a body
 * goes, how to authenticate, what one event of a streamed answer means, and how to read an error.
 */
import { gatewayError, type ApiErrorProto } from '../../core/plugins/index.js';
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
  event(event: SseEvent): StreamStep;
  /** The engine's non-2xx answer as a service error, status and message kept. */
  error(status: number, text: string): ApiErrorProto;
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

/**
 * An engine's error as a service error: its status, `type` and message. The engine refusing the
 * gateway's own key is no fault of the caller's: 502, marked permanent, as is an exhausted quota.
 */
function engineError(status: number, type: string | undefined, message: string, extra: Record<string, string> = {}): ApiErrorProto {
  const refused = status === 401 || status === 403;
  const permanent = refused || type === 'insufficient_quota';
  return {
    code: `upstream.${type ?? `http_${status}`}`,
    message,
    statusCode: refused ? 502 : status,
    args: { ...extra, ...(type ? { type } : {}), ...(permanent ? { retryable: 'false' } : {}) },
  };
}

const badEvent = (reason: string): StreamStep => ({ kind: 'bad', reason });

export const openAiDialect: Dialect = {
  path(body) {
    if (Array.isArray(body.messages)) return '/chat/completions';
    if (body.prompt !== undefined) return '/completions';
    if (body.input !== undefined) return '/embeddings';
    throw gatewayError('VALIDATION_FAILED', { param: 'data', args: { reason: 'expected a chat (messages), completion (prompt) or embeddings (input) request' } });
  },
  auth: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
  headers: {},
  event({ data }) {
    if (data === '[DONE]') return END;
    if (!looksLikeObject(data)) return badEvent(`a stream event is not a JSON object: ${data.slice(0, 80)}`);
    if (data.startsWith('{"error"')) {
      const body = parse(data);
      const error = isObject(body) && isObject(body.error) ? body.error : {};
      return { kind: 'error', error: engineError(502, stringOr(error.type), stringOr(error.message) ?? 'the engine reported an error mid-stream') };
    }
    return { kind: 'chunk', json: data, last: false };
  },
  error(status, text) {
    const body = parse(text);
    const error = isObject(body) ? (isObject(body.error) ? body.error : body) : {};
    const extra: Record<string, string> = {};
    if (typeof error.param === 'string') extra.param = error.param;
    if (typeof error.code === 'string') extra.code = error.code;
    return engineError(status, stringOr(error.type), stringOr(error.message) ?? (text.slice(0, 500) || `the engine answered ${status}`), extra);
  },
};

/** HTTP status of an Anthropic error that arrives as a stream event (after the engine's 200). */
const ANTHROPIC_EVENT_STATUS: Record<string, number> = {
  overloaded_error: 529, rate_limit_error: 429, api_error: 500, invalid_request_error: 400, request_too_large: 413,
};

export const anthropicDialect: Dialect = {
  path: () => '/v1/messages',
  auth: (apiKey) => ({ 'x-api-key': apiKey }),
  headers: { 'anthropic-version': '2023-06-01' },
  event({ event, data }) {
    if (!looksLikeObject(data)) return badEvent(`a stream event is not a JSON object: ${data.slice(0, 80)}`);
    if (event === 'error') {
      const body = parse(data);
      const error = isObject(body) && isObject(body.error) ? body.error : {};
      const type = stringOr(error.type);
      return { kind: 'error', error: engineError(ANTHROPIC_EVENT_STATUS[type ?? ''] ?? 500, type, stringOr(error.message) ?? 'the engine reported an error mid-stream') };
    }
    return { kind: 'chunk', json: data, last: event === 'message_stop' };
  },
  error(status, text) {
    const body = parse(text);
    const error = isObject(body) && isObject(body.error) ? body.error : {};
    return engineError(status, stringOr(error.type), stringOr(error.message) ?? (text.slice(0, 500) || `the engine answered ${status}`));
  },
};

function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export const DIALECTS = { openai: openAiDialect, anthropic: anthropicDialect } as const;
