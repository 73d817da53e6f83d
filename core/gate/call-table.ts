import { EventEmitter, once } from 'node:events';
import { gatewayError, type GatewayError } from '../errors.js';
import { fromServiceError } from '../grpc/api-error.js';
import type { GateToServiceProto, ServiceToGateProto } from '../../proto/src/index.js';
import type { GateInstance, Instance } from './instance.js';
import { ServiceCall, type ServiceCallHooks } from './service-call.js';

/**
 * A call in flight: the call, the instance that answers it (it moves on a reconnect, and to a
 * fallback; none during a retry's backoff) and its deadline timer. Nothing more: what a retry needs
 * is failover's (failover-calls.ts), what observation needs is the call's observer.
 */
interface CallEntry {
  readonly call: ServiceCall;
  instance: Instance | undefined;
  timer: NodeJS.Timeout | undefined;
}

/** What the table asks of failover (the Gate wires it to its Failover). */
export interface Retries {
  /** Whether a failed call goes on elsewhere: true when it does, and the caller sees nothing. */
  retry(call: ServiceCall, error: GatewayError): boolean;
  /** The call settled: failover forgets its state for it. */
  released(call: ServiceCall): void;
}

export interface CallLimits {
  readonly maxBufferedBytes: number;
  readonly maxAnswerBytes: number;
}

/**
 * The calls in flight, by requestId: opening one (the ID, the call, its deadline), the answers
 * matched to it, its release when it settles, and the drain at shutdown.
 */
export class CallTable {
  readonly #calls = new Map<number, CallEntry>();
  /** `idle`: the last call in flight settled (the drain at shutdown waits for it). */
  readonly #changes = new EventEmitter();
  /** What every call asks of the table: one object shared by all calls (no closures per call). */
  readonly #hooks: ServiceCallHooks;
  #retries: Retries | undefined = undefined;
  #nextRequestId = 1;

  constructor(limits: CallLimits) {
    this.#hooks = {
      send: (call, partialPredict) => this.instanceOf(call)?.send({ requestId: call.requestId, partialPredict }),
      whenWritable: (call) => this.instanceOf(call)?.whenWritable(call.requestId) ?? Promise.resolve(),
      cancel: (call) => this.instanceOf(call)?.send({ requestId: call.requestId, cancel: { requestIdToCancel: call.requestId } }),
      release: (call) => this.#release(call),
      maxBufferedBytes: limits.maxBufferedBytes,
      maxAnswerBytes: limits.maxAnswerBytes,
    };
  }

  /** Failures that a retry may fix go to `retries` first, and it hears of every call that settles. */
  retryWith(retries: Retries): void {
    this.#retries = retries;
  }

  get size(): number {
    return this.#calls.size;
  }

  /**
   * A new call to `instance` (of the service `serviceId`, whose instances answer it), with its overall
   * deadline (`timeoutMs`, 0 for none). Nothing is sent yet: `dispatch` sends, once whoever opened the
   * call has set it up (its observer, its failover state, its caller's signal).
   */
  open(instance: Instance, serviceId: number, serviceName: string, timeoutMs: number): ServiceCall {
    const requestId = this.#nextRequestId++;
    const call = new ServiceCall(requestId, serviceId, this.#hooks);
    const entry: CallEntry = { call, instance, timer: undefined };
    this.#calls.set(requestId, entry);
    instance.take(call);
    if (timeoutMs > 0 && Number.isFinite(timeoutMs)) entry.timer = setTimeout(expire, timeoutMs, call, serviceName, timeoutMs);
    return call;
  }

  /** Sends the call's request to its instance; a refused send fails the call with SERVICE_DISCONNECTED. */
  dispatch(call: ServiceCall, message: GateToServiceProto, serviceName: string): void {
    if (call.settled) return;
    if (!this.instanceOf(call)?.send(message)) call.fail(gatewayError('SERVICE_DISCONNECTED', { args: { service: serviceName } }));
  }

  /** The instance that answers a call in flight (undefined once it settled, or during a backoff). */
  instanceOf(call: ServiceCall): Instance | undefined {
    return this.#calls.get(call.requestId)?.instance;
  }

  /** Whether the call is still in the table (not settled). */
  has(call: ServiceCall): boolean {
    return this.#calls.get(call.requestId)?.call === call;
  }

  /** The call is answered by `instance` from now on (a fallback), or by none for now (a backoff). */
  moveTo(call: ServiceCall, instance: Instance | undefined): void {
    const entry = this.#calls.get(call.requestId);
    if (!entry) return;
    entry.instance?.letGo(call.requestId);
    entry.instance = instance;
    instance?.take(call);
  }

  /** Calls that moved with their instance's replacement (a reconnect) follow it. */
  followed(calls: readonly ServiceCall[], next: Instance): void {
    for (const call of calls) {
      const entry = this.#calls.get(call.requestId);
      if (entry) entry.instance = next;
    }
  }

  /** An answer frame from `instance`: delivered to its call, or its error fails it (unless retried). */
  deliver(instance: GateInstance, message: ServiceToGateProto): void {
    const requestId = Number(message.requestId ?? 0);
    const entry = this.#calls.get(requestId);
    if (!entry) {
      instance.log.debug({ requestId, body: message.body }, 'answer for a request that is no longer waiting');
      return;
    }
    // An instance answers only requests routed to its own service.
    if (entry.call.serviceId !== instance.service.id) {
      instance.log.warn({ requestId }, "answer for another service's request dropped");
      return;
    }
    if (message.body === 'error') this.fail(entry.call, fromServiceError(message.error ?? {}, instance.service.name));
    else entry.call.deliver(message);
  }

  /** Fails a call whose instance failed it or went away, unless failover sends it on. */
  fail(call: ServiceCall, error: GatewayError): void {
    if (!this.#retries?.retry(call, error)) call.fail(error);
  }

  /** Resolves when no call is in flight, or after `timeoutMs`; then fails what is left with `error`. */
  async drain(timeoutMs: number, error: GatewayError): Promise<void> {
    if (this.#calls.size > 0) {
      await once(this.#changes, 'idle', { signal: AbortSignal.timeout(timeoutMs) }).catch(() => undefined);
    }
    for (const { call } of [...this.#calls.values()]) call.fail(error);
  }

  #release(call: ServiceCall): void {
    const entry = this.#calls.get(call.requestId);
    if (!entry) return;
    this.#calls.delete(call.requestId);
    entry.instance?.letGo(call.requestId);
    if (entry.timer) clearTimeout(entry.timer);
    this.#retries?.released(call);
    if (this.#calls.size === 0) this.#changes.emit('idle');
  }
}

/** The predict deadline of a call passed (a timer callback shared by every call). */
function expire(call: ServiceCall, serviceName: string, timeoutMs: number): void {
  call.fail(gatewayError('PREDICT_TIMEOUT', { args: { service: serviceName, timeoutSec: timeoutMs / 1000 } }), true);
}
