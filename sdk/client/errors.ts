import * as grpc from '@grpc/grpc-js';
import { statusOfSimpleStatus, type ApiErrorProto, type StringMap } from '@model-gateway/protocol';

/** HTTP-like status of a gRPC status code, for transport failures that carry no ApiErrorProto. */
const HTTP_BY_GRPC: Partial<Record<grpc.status, number>> = {
  [grpc.status.CANCELLED]: 499,
  [grpc.status.INVALID_ARGUMENT]: 400,
  [grpc.status.DEADLINE_EXCEEDED]: 504,
  [grpc.status.NOT_FOUND]: 404,
  [grpc.status.PERMISSION_DENIED]: 403,
  [grpc.status.RESOURCE_EXHAUSTED]: 429,
  [grpc.status.UNIMPLEMENTED]: 501,
  [grpc.status.UNAVAILABLE]: 503,
  [grpc.status.UNAUTHENTICATED]: 401,
};

/**
 * A failed Gate call: an in-band `ClientResponseProto.error` (code, message, statusCode, args), or a
 * transport failure (code `timeout` for an expired deadline, else the gRPC status name, e.g. `UNAVAILABLE`),
 * or `wrong-response` for an answer the helper cannot read.
 */
export class GateClientError extends Error {
  override readonly name = 'GateClientError';

  constructor(
    readonly code: string,
    message: string,
    readonly statusCode: number,
    readonly args: StringMap = {},
    /** The gRPC status when the failure was a transport one. */
    readonly grpcCode?: grpc.status,
  ) {
    super(message);
  }

  static fromApiError(error: ApiErrorProto | undefined): GateClientError {
    const proto = error ?? {};
    const statusCode =
      proto.statusCode !== undefined && proto.statusCode > 0
        ? proto.statusCode
        : ((proto.status !== 'OK' ? statusOfSimpleStatus(proto.status) : undefined) ?? 500);
    const code = proto.code || 'unknown-error';
    return new GateClientError(code, proto.message || code, statusCode, { ...(proto.args ?? {}) });
  }

  /** Any thrown value as a GateClientError (gRPC errors by status; others as `UNKNOWN`). */
  static from(err: unknown): GateClientError {
    if (err instanceof GateClientError) return err;
    const grpcError = err as Partial<grpc.ServiceError> | undefined;
    if (grpcError && typeof grpcError.code === 'number') {
      const status = grpcError.code as grpc.status;
      const code = status === grpc.status.DEADLINE_EXCEEDED ? 'timeout' : (grpc.status[status] ?? 'UNKNOWN');
      return new GateClientError(code, grpcError.details || grpcError.message || code, HTTP_BY_GRPC[status] ?? 500, {}, status);
    }
    const message = err instanceof Error ? err.message : String(err);
    return new GateClientError('UNKNOWN', message, 500);
  }
}
