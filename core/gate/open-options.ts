import type {
  BatchRequestProto,
  ExtendedRequestProto,
  FitRequestProto,
  PartialPredictRequestProto,
  PredictRequestProto,
  StringMap,
} from '../../proto/src/index.js';
import type { CallContext } from './call-context.js';
import type { FallbackTarget } from './failover.js';

/** What a request to a service carries: exactly one GateToServiceProto request member. */
export type GateRequest =
  | { predict: PredictRequestProto }
  | { ext: ExtendedRequestProto }
  | { batch: BatchRequestProto }
  | { fit: FitRequestProto }
  | { partialPredict: PartialPredictRequestProto };

export interface OpenOptions {
  /** Overall deadline; defaults to the service's timeoutSec, else gate.defaultTimeoutSec. 0 = none. */
  timeoutMs?: number;
  /** Deadline from dispatch to the first answer frame of a stream (ms; absent or 0: none). */
  firstChunkTimeoutMs?: number;
  /** Deadline between two answer frames of a stream (ms; absent or 0: none). */
  idleTimeoutMs?: number;
  /**
   * Where the call was admitted (`http.callContext`, a gRPC client call): who calls, the request's
   * record and trace, the headers and signal. `headers` and `signal` below override its own.
   */
  context?: CallContext;
  /** Aborting it (caller gone, caller cancelled) fails the call and sends `cancel` to the service. */
  signal?: AbortSignal;
  /** Headers for the service (Z-requestId, caller and billing headers); default: the context's. */
  headers?: StringMap;
  /**
   * Services to try, in order, when `service` cannot answer a predict (no instance, connection
   * error, 5xx, 429, timeout before the first answer). Default: the service's configured `fallbacks`.
   */
  fallbacks?: readonly FallbackTarget[];
  /** The model the request asks for: instances that report it loaded are preferred. */
  model?: string;
  /** A key (a hash of the conversation's prefix) that picks a consistent instance (prefix affinity). */
  affinityKey?: string;
}

export function predictOf(request: GateRequest): PredictRequestProto | undefined {
  return 'predict' in request ? request.predict : undefined;
}
