import { GatewayError, errorTypeForStatus, type GatewayError as GatewayErrorType } from '../errors.js';
import type { ApiErrorProto } from './messages.js';

/**
 * A catalog error as the `error` member of a gRPC response: its HTTP status in `statusCode`, and in
 * `status` too when `SimpleStatusProto` has a value for it, because the public SDKs' clients read
 * `status` (unset, it reads as OK).
 */
export function toApiErrorProto(err: GatewayErrorType): ApiErrorProto {
  const proto: ApiErrorProto = {
    code: err.grpcCode,
    message: err.expose ? err.message : 'Internal gateway error',
    statusCode: err.status,
    args: err.expose ? err.args : {},
  };
  const name = STATUS_NAMES.get(err.status);
  if (name) proto.status = name;
  return proto;
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
  return new GatewayError({
    code,
    status,
    type: errorTypeForStatus(status),
    message: proto.message || `Service '${serviceName}' failed with ${code}`,
    args: proto.args ?? {},
    grpcCode: code,
    permanent: proto.args?.retryable === 'false',
  });
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

/** The enum name of each HTTP status that has one (the table's numbers are distinct). */
const STATUS_NAMES = new Map(Object.entries(SIMPLE_STATUS).map(([name, status]) => [status, name]));
