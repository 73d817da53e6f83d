import type { ApiErrorProto, StringMap } from '../../core/gate/messages.js';
import { PayloadError } from '../payload.js';

/** Error codes a model service sends as `ServiceToGateProto.error`, and gate codes the SDK reacts to. */
export const ServiceErrorCodes = {
  internalError: 'platform-action.common.internal-error',
  badRequest: 'platform-action.common.bad-request',
  processingException: 'platform-action.common.processing-exception',
  methodNotSupported: 'platform-action.common.method-not-supported',
  noPartialInBatch: 'platform-action.common.no-partial-in-batch',
  noRawPayloadInBatch: 'platform-action.common.no-raw-payload-in-batch',
  /** Sent for requests that arrive on a connection that is draining; clients retry on it. */
  channelClosed: 'platform-action.common.channel-closed-error',
  /** From the gate: the connection token is unknown. Fatal for that connection. */
  instanceByTokenNotFound: 'platform.gate.instance_by_token_not_found',
} as const;

const CLIENT_ERROR_CODES = new Set<string>([
  ServiceErrorCodes.badRequest,
  ServiceErrorCodes.methodNotSupported,
  ServiceErrorCodes.noPartialInBatch,
  ServiceErrorCodes.noRawPayloadInBatch,
]);

/**
 * An error a handler throws to answer with its own code, message, HTTP status and arguments.
 * Anything else a handler throws becomes `platform-action.common.processing-exception` (500).
 */
export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  readonly status: number;
  readonly args: StringMap;

  constructor(
    readonly code: string,
    message: string,
    status?: number,
    args: StringMap = {},
  ) {
    super(message);
    this.status = status ?? (CLIENT_ERROR_CODES.has(code) ? 400 : 500);
    this.args = args;
  }

  static badRequest(message: string, args?: StringMap): ServiceError {
    return new ServiceError(ServiceErrorCodes.badRequest, message, 400, args);
  }

  static methodNotSupported(method: string): ServiceError {
    return new ServiceError(ServiceErrorCodes.methodNotSupported, `Method '${method}' is not supported by this service`, 400, {
      method,
    });
  }
}

/** The reason of a request's signal when the gateway sends `cancel` for it. */
export class RequestCancelledError extends Error {
  override readonly name = 'RequestCancelledError';
}

/** The `SimpleStatusProto` name of the common statuses, sent next to `statusCode` for older gates. */
const STATUS_NAMES: Record<number, string> = {
  400: 'BAD_REQUEST', 401: 'UNAUTHORIZED', 402: 'PAYMENT_REQUIRED', 403: 'FORBIDDEN', 404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED', 408: 'REQUEST_TIMEOUT', 409: 'CONFLICT', 413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE', 422: 'UNPROCESSABLE_ENTITY', 429: 'TOO_MANY_REQUESTS', 500: 'INTERNAL_SERVER_ERROR',
  501: 'NOT_IMPLEMENTED', 502: 'BAD_GATEWAY', 503: 'SERVICE_UNAVAILABLE', 504: 'GATEWAY_TIMEOUT',
};

/**
 * The ApiErrorProto for anything a handler threw: a ServiceError keeps its code, status and args; a
 * PayloadError (unreadable input) is a bad request; anything else is a processing exception (500) whose
 * text also goes into `args.message`, as the Java SDK does.
 */
export function toApiErrorProto(err: unknown): ApiErrorProto {
  if (err instanceof ServiceError) return apiError(err.code, err.message, err.status, err.args);
  if (err instanceof PayloadError) return apiError(ServiceErrorCodes.badRequest, err.message, 400, {});
  const message = err instanceof Error ? err.message || err.name : String(err);
  return apiError(ServiceErrorCodes.processingException, message, 500, { message });
}

export function apiError(code: string, message: string, status: number, args: StringMap): ApiErrorProto {
  const proto: ApiErrorProto = { code, message, statusCode: status, args };
  const name = STATUS_NAMES[status];
  if (name) proto.status = name;
  return proto;
}
