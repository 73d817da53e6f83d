/**
 * What the core tells observers (metrics, usage accounting, tracing) about the traffic it carries.
 * The core emits; plugins subscribe through `ctx.events`. The core never imports an observer.
 * Emitting to an event nobody listens to costs one array-length check, so the hot path stays as
 * it is when no metrics plugin is loaded.
 */

/** One HTTP request, when its response has been handed to Node. */
export interface HttpRequestEvent {
  requestId: string;
  method: string;
  /** The route template that matched (`/api/adapters/chatapi{/v1}/chat/completions`), `unmatched` when none. */
  route: string;
  /** The plugin whose router matched; `none` when none. */
  plugin: string;
  status: number;
  durationMs: number;
  /** Time spent waiting for services (from sending the request to its last answer); 0 when none was called. */
  serviceWaitMs: number;
  service?: string;
  account?: string;
  keyName?: string;
  /** A stored key's ID (`key_…`). */
  keyId?: string;
  /** The model an adapter reported the answer's tokens for. */
  model?: string;
  bytesIn: number;
  bytesOut: number;
  inputTokens?: number;
  outputTokens?: number;
  /** The coded error the response carries, when it is one. */
  errorCode?: string;
}

/** One gRPC client call (process, processResponseStream, processStream, speech), when it ended. */
export interface GrpcCallEvent {
  method: string;
  service?: string;
  account?: string;
  keyName?: string;
  /** A stored key's ID (`key_…`). */
  keyId?: string;
  /** `OK` or the error code the caller received. */
  code: string;
  durationMs: number;
  serviceWaitMs: number;
}

/** One request to a model service, when it settled. */
export interface ServiceCallEvent {
  service: string;
  /** `ok` or the error code the call ended with. */
  outcome: string;
  durationMs: number;
  /** Time to the first answer frame; undefined when none came. */
  firstChunkMs?: number;
  chunks: number;
}

export interface InstanceEvent {
  service: string;
  change: 'connected' | 'disconnected';
  /** A reconnect of the same process (same boot UUID) that replaced its old stream. */
  reconnect?: boolean;
  /** Why a stream ended (heartbeat timeout, stream error, ...). */
  reason?: string;
  /** The stream ended while serving, without `stopServing`, and not because the gateway shuts down. */
  dropped?: boolean;
  /** Calls that were in flight on the stream when it ended. */
  failedCalls?: number;
}

/** Tokens of one answer, as the answer's `usage` reported them. */
export interface UsageEvent {
  at: number;
  accountId: number;
  account: string;
  serviceId: number;
  service: string;
  inputTokens: number;
  outputTokens: number;
  /** The stored API key's ID (`key_…`), or the config-file key's name in `keyName`. */
  keyId?: string;
  keyName?: string;
  /** The model the request named (chat adapters), when it named one. */
  model?: string;
  /** What the tokens cost by the service's prices (core/userspace/prices.ts); absent without prices. */
  cost?: number;
  currency?: string;
}

/** One billing charge a service reported (`deferredBillingCharge(s)`). */
export interface BillingEvent {
  at: number;
  /** The account the charge is for, when it is known (the charge's params or the request it names). */
  accountId?: number;
  serviceId: number;
  service: string;
  amount: number;
  currency?: string;
  /** The charge's idempotency key (`deferredBillingCharges`) or billing request ID (`deferredBillingCharge`). */
  idempotencyKey?: string;
}

/** A request refused for a limit (rate limit, quota): the coded error it got. */
export interface RejectionEvent {
  code: string;
}

/** An async task changed state. */
export interface TaskEvent {
  status: string;
  /** From creation to the claim (when it was claimed). */
  queueWaitMs?: number;
  /** From the claim to completion (when it finished). */
  processingMs?: number;
}

/** A fitting job changed status. */
export interface FitJobEvent {
  status: string;
}

export interface GatewayEventMap {
  httpRequest: HttpRequestEvent;
  grpcCall: GrpcCallEvent;
  serviceCall: ServiceCallEvent;
  /** Time between two answer frames of one request (a stream's inter-chunk gap). */
  chunkGap: { service: string; ms: number };
  instance: InstanceEvent;
  usage: UsageEvent;
  billing: BillingEvent;
  rejection: RejectionEvent;
  task: TaskEvent;
  fitJob: FitJobEvent;
}

export type GatewayEventName = keyof GatewayEventMap;
type Listener<E extends GatewayEventName> = (event: GatewayEventMap[E]) => void;

/**
 * A typed, synchronous event hub. Listeners run inline and must be cheap; one that throws is
 * isolated (the error goes to `onListenerError`) so an observer can never fail a request.
 */
export class GatewayEvents {
  readonly #listeners: { [E in GatewayEventName]?: Listener<E>[] } = {};
  onListenerError: (err: unknown, event: GatewayEventName) => void = () => {};

  on<E extends GatewayEventName>(event: E, listener: Listener<E>): () => void {
    const list = (this.#listeners[event] ??= []) as Listener<E>[];
    list.push(listener);
    return () => {
      const index = list.indexOf(listener);
      if (index >= 0) list.splice(index, 1);
    };
  }

  /** Whether anyone listens: emitters check it before building an event object. */
  has(event: GatewayEventName): boolean {
    return (this.#listeners[event]?.length ?? 0) > 0;
  }

  emit<E extends GatewayEventName>(event: E, payload: GatewayEventMap[E]): void {
    const list = this.#listeners[event] as Listener<E>[] | undefined;
    if (!list) return;
    for (const listener of list) {
      try {
        listener(payload);
      } catch (err) {
        this.onListenerError(err, event);
      }
    }
  }
}
