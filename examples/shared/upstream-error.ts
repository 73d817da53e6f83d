/**
 * An HTTP upstream's error, relayed exactly (for the proxy examples, and any service fronting an HTTP
 * engine): the upstream's status, its message unchanged, and in the error's args the relay
 * convention the gateway reads (the protocol's `UpstreamErrorArgs`): its `type`, `code` and
 * `param`, its retry and rate-limit headers, and its request id. The adapters then answer the caller
 * with that status, body fields and headers, so clients see what the upstream sent.
 */
import { ServiceError, UpstreamErrorArgs as ARG } from '@model-gateway/sdk';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The upstream headers relayed: what clients read to pace retries. */
const RELAYED_HEADER = /^(retry-after|retry-after-ms|x-ratelimit-[a-z0-9-]+|anthropic-ratelimit-[a-z0-9-]+)$/;

export type UpstreamHeaders = Record<string, string | string[] | undefined>;

/** Which error body the upstream speaks: OpenAI's `{error:{message,type,param,code}}` or Anthropic's `{type:"error",error:{type,message}}`. */
export type ErrorDialect = 'openai' | 'anthropic';

const first = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/**
 * The service error for an upstream error answer. The upstream refusing the proxy's own credentials
 * (401, 403) is the proxy's fault, not the caller's: 502, and no retry helps. OpenAI's exhausted quota
 * is a 429 that no retry fixes either.
 */
export function upstreamError(status: number, headers: UpstreamHeaders, text: string, dialect: ErrorDialect): ServiceError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const error = isObject(body) && isObject(body.error) ? body.error : dialect === 'openai' && isObject(body) ? body : {};
  const message = typeof error.message === 'string' ? error.message : text.slice(0, 500) || `HTTP ${status}`;
  const type = typeof error.type === 'string' ? error.type : undefined;
  const args: Record<string, string> = { [ARG.relayed]: 'true', [ARG.dialect]: dialect };
  if (type !== undefined) args[ARG.type] = type;
  if (typeof error.code === 'string') args[ARG.code] = error.code;
  if (typeof error.param === 'string') args[ARG.param] = error.param;
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    const v = first(value);
    if (v !== undefined && RELAYED_HEADER.test(lower)) args[`${ARG.headerPrefix}${lower}`] = v;
  }
  const requestId = first(headers['x-request-id']) ?? first(headers['request-id']);
  if (requestId) args[ARG.requestId] = requestId;
  const refused = status === 401 || status === 403;
  if (refused || type === 'insufficient_quota' || error.code === 'insufficient_quota') args.retryable = 'false';
  return new ServiceError(`upstream.${type ?? `http_${status}`}`, message, refused ? 502 : status, args);
}

/** An error the upstream sent inside a stream after its 200 (OpenAI `data: {"error":…}`, Anthropic `event: error`). */
export function upstreamStreamError(data: string, dialect: ErrorDialect, fallbackStatus: number): ServiceError {
  let body: unknown;
  try {
    body = JSON.parse(data);
  } catch {
    body = undefined;
  }
  const type = isObject(body) && isObject(body.error) && typeof body.error.type === 'string' ? body.error.type : undefined;
  return upstreamError(type ? STREAM_ERROR_STATUS[type] ?? fallbackStatus : fallbackStatus, {}, data, dialect);
}

/** HTTP status of an Anthropic error type that arrives as a stream event (the status it has as an answer). */
const STREAM_ERROR_STATUS: Record<string, number> = {
  overloaded_error: 529, rate_limit_error: 429, api_error: 500, invalid_request_error: 400, request_too_large: 413, timeout_error: 504,
};
