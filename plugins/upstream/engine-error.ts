/**
 * An engine's error as the service error the gateway relays exactly (the protocol's
 * `UpstreamErrorArgs`, core/grpc/api-error.ts): the engine's status and message, its `type`, `code`
 * and `param`, its retry and rate-limit headers and its request id. Callers then see what the engine
 * sent, as if they had called it themselves. The engine refusing the gateway's own key is no fault
 * of the caller's: 502, marked permanent, as is an exhausted quota.
 */
import { UpstreamErrorArgs as ARG, isRelayedUpstreamHeader, type ApiErrorProto } from '../../core/plugins/index.js';

/** Whose error body the engine speaks. */
export type ErrorDialect = 'openai' | 'anthropic';

export interface EngineErrorFields {
  readonly message: string;
  readonly type?: string | undefined;
  readonly code?: string | undefined;
  readonly param?: string | undefined;
}

/** Engine response headers, names in lower case. */
export type EngineHeaders = Readonly<Record<string, string | string[] | undefined>>;

const first = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

export function engineError(dialect: ErrorDialect, status: number, fields: EngineErrorFields, headers: EngineHeaders = {}): ApiErrorProto {
  const { type, code, param } = fields;
  const refused = status === 401 || status === 403;
  const permanent = refused || type === 'insufficient_quota' || code === 'insufficient_quota';
  const args: Record<string, string> = { [ARG.relayed]: 'true', [ARG.dialect]: dialect };
  if (type !== undefined) args[ARG.type] = type;
  if (code !== undefined) args[ARG.code] = code;
  if (param !== undefined) args[ARG.param] = param;
  for (const name in headers) {
    const value = first(headers[name]);
    if (value !== undefined && isRelayedUpstreamHeader(name)) args[`${ARG.headerPrefix}${name}`] = value;
  }
  const requestId = first(headers['x-request-id']) ?? first(headers['request-id']);
  if (requestId) args[ARG.requestId] = requestId;
  if (permanent) args.retryable = 'false';
  return { code: `upstream.${type ?? `http_${status}`}`, message: fields.message, statusCode: refused ? 502 : status, args };
}
