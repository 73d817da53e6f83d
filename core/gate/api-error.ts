import { GatewayError, errorTypeForStatus, type GatewayError as GatewayErrorType, type UpstreamErrorFields } from '../errors.js';
import type { ApiErrorProto } from './messages.js';

/** A catalog error as the `error` member of a gRPC response, with its HTTP status in `statusCode`. */
export function toApiErrorProto(err: GatewayErrorType): ApiErrorProto {
  return {
    code: err.grpcCode,
    message: err.expose ? err.message : 'Internal gateway error',
    statusCode: err.status,
    args: err.expose ? err.args : {},
  };
}

/** Codes of the service SDKs that mean a client mistake when the service sets no status of its own. */
const CLIENT_ERROR_CODES = new Set([
  'platform-action.common.bad-request',
  'platform-action.common.method-not-supported',
  'platform-action.common.no-partial-in-batch',
  'platform-action.common.no-raw-payload-in-batch',
]);

/**
 * A service's own error, passed on to the caller with its code and message. The HTTP status is
 * `statusCode` when set, else the `status` enum, else 400 for the SDKs' client-error codes and 500.
 * A service marks an error that no retry can fix (an exhausted upstream quota, its own credentials
 * refused) with the arg `retryable: "false"`; HTTP callers then get `x-should-retry: false`.
 */
export function fromServiceError(proto: ApiErrorProto, serviceName: string): GatewayError {
  const code = proto.code || 'platform-action.common.internal-error';
  const status = validStatus(proto.statusCode) ?? statusFromEnum(proto.status) ?? (CLIENT_ERROR_CODES.has(code) ? 400 : 500);
  const relay = upstreamRelay(proto.args ?? {}, code);
  return new GatewayError({
    code,
    status,
    type: errorTypeForStatus(status),
    message: proto.message || `Service '${serviceName}' failed with ${code}`,
    args: relay.args,
    grpcCode: code,
    permanent: proto.args?.retryable === 'false',
    headers: relay.headers,
    upstream: relay.upstream,
  });
}

/**
 * The relay convention of proxying services (the example proxies, and any service that fronts an HTTP
 * engine): a service error whose args carry `upstream.relayed: "true"` repeats an upstream's HTTP
 * error, with `upstream.type`, `upstream.code` and `upstream.param` (absent when the upstream sent
 * null), `upstream.header.<name>` for each of its retry headers and `upstream.request_id`. They become
 * the error's exact type/code/param and response headers instead of ordinary args.
 */
export const UPSTREAM_ARG = {
  relayed: 'upstream.relayed',
  /** `openai` or `anthropic`: whose error body the upstream sent. */
  dialect: 'upstream.dialect',
  type: 'upstream.type',
  code: 'upstream.code',
  param: 'upstream.param',
  headerPrefix: 'upstream.header.',
  requestId: 'upstream.request_id',
} as const;

/** Upstream headers passed on to the caller: the ones clients read to pace their retries. */
const RELAYED_HEADER = /^(retry-after|retry-after-ms|x-ratelimit-[a-z0-9-]+|anthropic-ratelimit-[a-z0-9-]+)$/;

interface Relay {
  args: Record<string, string>;
  headers?: Record<string, string>;
  upstream?: UpstreamErrorFields;
}

function upstreamRelay(args: Record<string, string>, code: string): Relay {
  if (args[UPSTREAM_ARG.relayed] !== 'true') return { args };
  const rest: Record<string, string> = {};
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(args)) {
    if (key.startsWith(UPSTREAM_ARG.headerPrefix)) {
      const name = key.slice(UPSTREAM_ARG.headerPrefix.length).toLowerCase();
      if (RELAYED_HEADER.test(name) && /^[\x20-\x7e]{1,200}$/.test(value)) headers[name] = value;
    } else if (key === UPSTREAM_ARG.requestId) {
      if (/^[\x21-\x7e]{1,200}$/.test(value)) headers['x-upstream-request-id'] = value;
    } else if (!key.startsWith('upstream.')) {
      rest[key] = value;
    }
  }
  return {
    args: rest,
    headers,
    // An Anthropic error has no code: the service's own error code stands in for it.
    upstream: { type: args[UPSTREAM_ARG.type] ?? null, code: args[UPSTREAM_ARG.code] ?? (args[UPSTREAM_ARG.dialect] === 'anthropic' ? code : null), param: args[UPSTREAM_ARG.param] ?? null },
  };
}

function validStatus(status: number | undefined): number | undefined {
  return status !== undefined && status >= 400 && status <= 599 ? status : undefined;
}

/** `SimpleStatusProto` arrives as its name (enums: String); the number is in the name's table. */
function statusFromEnum(name: string | undefined): number | undefined {
  if (!name || name === 'OK') return undefined;
  const status = SIMPLE_STATUS[name];
  return validStatus(status);
}

const SIMPLE_STATUS: Record<string, number> = {
  BAD_REQUEST: 400, UNAUTHORIZED: 401, PAYMENT_REQUIRED: 402, FORBIDDEN: 403, NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405, NOT_ACCEPTABLE: 406, PROXY_AUTHENTICATION_REQUIRED: 407, REQUEST_TIMEOUT: 408,
  CONFLICT: 409, GONE: 410, LENGTH_REQUIRED: 411, PRECONDITION_FAILED: 412, PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414, UNSUPPORTED_MEDIA_TYPE: 415, RANGE_NOT_SATISFIABLE: 416, EXPECTATION_FAILED: 417,
  IM_A_TEAPOT: 418, MISDIRECTED_REQUEST: 421, UNPROCESSABLE_ENTITY: 422, LOCKED: 423, FAILED_DEPENDENCY: 424,
  TOO_EARLY: 425, UPGRADE_REQUIRED: 426, PRECONDITION_REQUIRED: 428, TOO_MANY_REQUESTS: 429,
  REQUEST_HEADER_FIELDS_TOO_LARGE: 431, UNAVAILABLE_FOR_LEGAL_REASONS: 451, NO_RESPONSE: 444,
  REQUEST_HEADER_TOO_LARGE: 494, SSL_CERTIFICATE_ERROR: 495, SSL_CERTIFICATE_REQUIRED: 496,
  HTTP_REQUEST_SENT_TO_HTTPS_PORT: 497, CLIENT_CLOSED_REQUEST: 499, INTERNAL_SERVER_ERROR: 500,
  NOT_IMPLEMENTED: 501, BAD_GATEWAY: 502, SERVICE_UNAVAILABLE: 503, GATEWAY_TIMEOUT: 504,
  HTTP_VERSION_NOT_SUPPORTED: 505, VARIANT_ALSO_NEGOTIATES: 506, INSUFFICIENT_STORAGE: 507, LOOP_DETECTED: 508,
  NOT_EXTENDED: 510, NETWORK_AUTHENTICATION_REQUIRED: 511, WEB_SERVER_RETURNED_UNKNOWN_ERROR: 520,
  WEB_SERVER_IS_DOWN: 521, CONNECTION_TIMED_OUT: 522, ORIGIN_IS_UNREACHABLE: 523, A_TIMEOUT_OCCURRED: 524,
  SSL_HANDSHAKE_FAILED: 525, INVALID_SSL_CERTIFICATE: 526, RAILGUN_ERROR: 527, SITE_IS_OVERLOADED: 529,
  SITE_IS_FROZEN: 530, ORIGIN_CONNECTION_TIME_OUT: 561,
};
