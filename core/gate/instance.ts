import type { ServiceEntry } from '../admission/directory.js';
import type { Logger } from '../observe/logger.js';
import type { GateToServiceProto, LoadReport } from '../../proto/src/index.js';
import type { ServiceCall } from './service-call.js';

export type InstanceState = 'serving' | 'draining' | 'closed';

/** How an instance reaches the gateway: a model service's gRPC stream, or run by the gateway itself. */
export type InstanceKind = 'stream' | 'local';

/**
 * One instance of a service as the Gate routes to it. A model service dialling in over
 * `processAsync` (ServiceSession) and an in-process instance (LocalInstance: the upstream connector's
 * HTTP engines) both are one: the Gate sends each the same GateToServiceProto messages and reads the
 * same ServiceToGateProto answers, so routing, deadlines, cancel and accounting treat both alike.
 * Read-only to everyone else: the instance makes its own transitions (see Instance).
 */
export interface GateInstance {
  readonly id: number;
  readonly kind: InstanceKind;
  readonly service: ServiceEntry;
  /** Stable across reconnects of the same process (`instanceBootUuid`); names a local instance. */
  readonly bootUuid: string;
  readonly hostname: string | undefined;
  readonly connectedAt: number;
  readonly state: InstanceState;
  /** Calls this instance must answer now. */
  readonly inFlight: number;
  readonly log: Logger;
  /** The latest load the instance reported (heartBeat headers); undefined when it reports none. */
  readonly load: InstanceLoad | undefined;
  /** The version (StartServing `version`, an integer) and image the instance announced; undefined when none. */
  readonly version: number | undefined;
  readonly image: string | undefined;
  /** The health of the engine behind an in-process instance, as its owner last reported it. */
  readonly engineHealth: EngineHealth | undefined;
  /**
   * Whether the instance's method descriptor declares a `config` input for `method` (docs/design.md,
   * decisions: such a method gets `{}` when the request has no config).
   */
  declaresConfig(method: string): boolean;
  /** Hands a message to the instance; false when it can no longer take any. */
  send(message: GateToServiceProto): boolean;
  /** Resolves when the instance can take more of a request's messages (`requestId`'s, when given) without the gateway buffering them. */
  whenWritable(requestId?: number): Promise<void>;
}

/** What an instance last said about its own load (proto/src/load-report.ts), and when. */
export interface InstanceLoad extends LoadReport {
  /** When the report arrived (ms since the epoch). */
  readonly at: number;
}

/**
 * The health of the engine behind an in-process instance (the upstream connector's probes), as its
 * owner last reported it: `unchecked` without a health check, `pending` before the first probe, then
 * what the last probe found and how many failed in a row.
 */
export interface EngineHealth {
  readonly status: 'healthy' | 'unhealthy' | 'pending' | 'unchecked';
  readonly consecutiveFailures: number;
  /** When the last probe ended (ms since the epoch); absent before the first. */
  readonly checkedAt?: number;
}

let nextInstanceId = 1;

/** A process-wide unique id for an instance (sessions and local instances share the sequence). */
export function newInstanceId(): number {
  return nextInstanceId++;
}

/**
 * What every instance owns, whatever carries its messages: its state and its transitions (serving,
 * draining, closed; closed is final), the calls it must answer (its in-flight count), and its last
 * load report. The pool asks for a transition; only the instance writes its state.
 */
export abstract class Instance implements GateInstance {
  readonly id = newInstanceId();
  abstract readonly kind: InstanceKind;
  readonly service: ServiceEntry;
  readonly connectedAt = Date.now();
  #state: InstanceState = 'serving';
  #load: InstanceLoad | undefined = undefined;
  /** Calls whose answers this instance must deliver, by requestId. */
  readonly #calls = new Map<number, ServiceCall>();

  constructor(service: ServiceEntry) {
    this.service = service;
  }

  abstract readonly bootUuid: string;
  abstract readonly hostname: string | undefined;
  abstract readonly log: Logger;
  abstract declaresConfig(method: string): boolean;
  abstract send(message: GateToServiceProto): boolean;
  abstract whenWritable(requestId?: number): Promise<void>;
  /** Ends the transport (the stream, the worker); called once, by close(). */
  protected abstract closeTransport(): void;

  get state(): InstanceState {
    return this.#state;
  }

  get inFlight(): number {
    return this.#calls.size;
  }

  get load(): InstanceLoad | undefined {
    return this.#load;
  }

  /** A dialled-in instance overrides these with what it announced. */
  get version(): number | undefined {
    return undefined;
  }

  get image(): string | undefined {
    return undefined;
  }

  /** Only a dialled-in instance may open a bulk lane (bulk-lane.ts). */
  get bulkLane(): boolean {
    return false;
  }

  /** Only an in-process instance has an engine behind it. */
  get engineHealth(): EngineHealth | undefined {
    return undefined;
  }

  reportLoad(load: LoadReport): void {
    this.#load = { ...load, at: Date.now() };
  }

  /** This instance answers `call` from now on. */
  take(call: ServiceCall): void {
    this.#calls.set(call.requestId, call);
  }

  /** This instance no longer answers the call (it settled, or moved to another instance). */
  letGo(requestId: number): void {
    this.#calls.delete(requestId);
  }

  /** Stops taking new requests; calls in flight go on. False when it was not serving. */
  drain(): boolean {
    if (this.#state !== 'serving') return false;
    this.#state = 'draining';
    return true;
  }

  /** Takes requests again after a drain (a local instance whose health check passes again). */
  serve(): boolean {
    if (this.#state !== 'draining') return false;
    this.#state = 'serving';
    return true;
  }

  /**
   * A reconnect of the same process: `next` answers this instance's calls from now on, and this one
   * drains (its stream stays readable, so late answers still arrive). Returns the calls moved.
   */
  handOver(next: Instance): ServiceCall[] {
    const moved = [...this.#calls.values()];
    for (const call of moved) next.take(call);
    this.#calls.clear();
    this.drain();
    return moved;
  }

  /**
   * Closes the instance for good (idempotent) and returns the calls it still had to answer, which
   * the Gate fails or sends elsewhere; none the second time.
   */
  close(): ServiceCall[] {
    if (this.#state === 'closed') return [];
    this.#state = 'closed';
    const lost = [...this.#calls.values()];
    this.#calls.clear();
    this.closeTransport();
    return lost;
  }
}

export type { ServiceEntry };
