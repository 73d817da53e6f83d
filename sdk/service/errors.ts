import { CLIENT_ERROR_CODES, ServiceErrorCodes, simpleStatusOf, type ApiErrorProto, type StringMap } from '../../proto/src/index.js';
import { PayloadError } from '../payload.js';

export { ServiceErrorCodes };

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
  const name = simpleStatusOf(status);
  if (name) proto.status = name;
  return proto;
}
