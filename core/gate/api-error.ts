import { GatewayError, errorTypeForStatus, type GatewayError as GatewayErrorType } from '../errors.js';
import { CLIENT_ERROR_CODES, statusOfSimpleStatus, type ApiErrorProto } from '../../proto/src/index.js';

/** A catalog error as the `error` member of a gRPC response, with its HTTP status in `statusCode`. */
export function toApiErrorProto(err: GatewayErrorType): ApiErrorProto {
  return {
    code: err.grpcCode,
    message: err.expose ? err.message : 'Internal gateway error',
    statusCode: err.status,
    args: err.expose ? err.args : {},
  };
}

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

/** `SimpleStatusProto` arrives as its name (enums: String); its number is the HTTP status. */
function statusFromEnum(name: string | undefined): number | undefined {
  if (!name || name === 'OK') return undefined;
  return validStatus(statusOfSimpleStatus(name));
}
