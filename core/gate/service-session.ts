import type * as grpc from '@grpc/grpc-js';
import type { ServiceEntry } from '../admission/directory.js';
import { drained } from '../flow/drain-and-cancel.js';
import type { Logger } from '../observe/logger.js';
import { every } from '../flow/timers.js';
import type { GateToServiceProto, ServiceToGateProto, StartServingProto } from '../../proto/src/index.js';
import { newInstanceId, type GateInstance, type InstanceLoad, type InstanceState } from './instance.js';
import type { ServiceCall } from './service-call.js';

export type ServiceStream = grpc.ServerDuplexStream<ServiceToGateProto, GateToServiceProto>;

export type SessionState = InstanceState;

/**
 * One `processAsync` stream of one model-service instance, after a valid `startServing`. It owns the
 * heartbeat timers and the calls routed to it; the pool decides which session gets a request.
 */
export class ServiceSession implements GateInstance {
  readonly id = newInstanceId();
  readonly kind = 'stream' as const;
  readonly service: ServiceEntry;
  readonly bootUuid: string;
  readonly start: StartServingProto;
  readonly connectedAt = Date.now();
  /** Calls whose answers this session must deliver; moved to the replacing session on reconnect. */
  readonly calls = new Map<number, ServiceCall>();
  state: SessionState = 'serving';
  load: InstanceLoad | undefined;
  #lastSeen = Date.now();
  #stopHeartbeats: (() => void) | undefined;
  readonly #stream: ServiceStream;
  readonly #log: Logger;

  /**
   * Whether the instance's method descriptor declares a `config` input for a method. Such a service
   * (the public Python SDK, the official service template) refuses a request without one with 400.
   */
  declaresConfig(method: string): boolean {
    const methods = this.start.serviceDescriptor?.methods;
    const input = methods?.[method]?.input ?? methods?.predict?.input;
    return input !== undefined && Object.hasOwn(input, 'config');
  }

  constructor(stream: ServiceStream, service: ServiceEntry, start: StartServingProto, log: Logger) {
    this.#stream = stream;
    this.service = service;
    this.start = start;
    // Without a boot UUID every stream is its own instance; a reconnect then cannot replace it.
    this.bootUuid = start.instanceBootUuid || `stream-${this.id}`;
    this.#log = log.child({ serviceId: service.id, service: service.name, session: this.id, bootUuid: this.bootUuid });
  }

  get log(): Logger {
    return this.#log;
  }

  get hostname(): string | undefined {
    return this.start.hostname || undefined;
  }

  get inFlight(): number {
    return this.calls.size;
  }

  /** Marks the stream alive; any message from the service counts. */
  touch(): void {
    this.#lastSeen = Date.now();
  }

  send(message: GateToServiceProto): boolean {
    if (this.state === 'closed') return false;
    try {
      this.#stream.write(message);
      return true;
    } catch (err) {
      this.#log.warn({ err }, 'write to service stream failed');
      return false;
    }
  }

  /**
   * Resolves when the stream's send buffer has room again (at once when it has room now, or when the
   * stream is gone). Streamed requests (recognition audio) wait on it so that a fast caller cannot make
   * the gateway buffer without bound when the service reads slowly; gRPC flow control then pushes back
   * on the caller.
   */
  whenWritable(): Promise<void> {
    if (this.state === 'closed' || !this.#stream.writableNeedDrain) return Promise.resolve();
    return drained(this.#stream);
  }

  /**
   * Sends `heartBeat{status:"Ok", interval}` now and every interval, and calls `onSilence` when the
   * service has been silent for 3 intervals + 1 s (docs/design.md, decisions).
   */
  startHeartbeats(intervalMs: number, onSilence: () => void): void {
    const beat = () => this.send({ heartBeat: { status: 'Ok', interval: intervalMs } });
    beat();
    const silenceLimit = 3 * intervalMs + 1000;
    this.#stopHeartbeats = every(intervalMs, () => {
      if (Date.now() - this.#lastSeen > silenceLimit) {
        this.#log.warn({ silentMs: Date.now() - this.#lastSeen }, 'service stream silent too long; dropping it');
        onSilence();
        return;
      }
      beat();
    });
  }

  /** Ends the gateway's side of the stream and stops the timers. Idempotent. */
  close(): void {
    this.#stopHeartbeats?.();
    this.#stopHeartbeats = undefined;
    if (this.state === 'closed') return;
    this.state = 'closed';
    try {
      this.#stream.end();
    } catch {
      // The transport is already gone; nothing to end.
    }
  }
}
