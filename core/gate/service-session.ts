import type * as grpc from '@grpc/grpc-js';
import type { ServiceEntry } from '../admission/directory.js';
import type { Logger } from '../observe/logger.js';
import { every } from '../flow/timers.js';
import {
  PeerSilence,
  silenceLimitMs,
  type GateToServiceProto,
  type ServiceToGateProto,
  type StartServingProto,
} from '../../proto/src/index.js';
import type { BulkLane } from './bulk-lane.js';
import { FairWrites, requestBytes } from './fair-writes.js';
import { Instance, type InstanceState } from './instance.js';

export type ServiceStream = grpc.ServerDuplexStream<ServiceToGateProto, GateToServiceProto>;

export type SessionState = InstanceState;

/**
 * One `processAsync` stream of one model-service instance, after a valid `startServing`. It owns the
 * heartbeat timers and the calls routed to it; the pool decides which session gets a request.
 */
export class ServiceSession extends Instance {
  readonly kind = 'stream' as const;
  readonly bootUuid: string;
  readonly start: StartServingProto;
  /** The service's silence, measured from startHeartbeats on. */
  #silence: PeerSilence | undefined;
  #stopHeartbeats: (() => void) | undefined;
  /** Writes to the stream, shared fairly between the accounts whose calls it carries (fair-writes.ts). */
  readonly #writes: FairWrites;
  /** The instance's second stream for its large requests, once it opened one (bulk-lane.ts). */
  #bulk: BulkLane | undefined;
  /** The instance's streams the service has not ended yet: its own, and its lane once joined. */
  #openStreams = 1;
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
    super(service);
    this.#writes = new FairWrites(stream);
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

  override get version(): number | undefined {
    return this.start.version ?? undefined;
  }

  override get image(): string | undefined {
    return this.start.image || undefined;
  }

  /** Marks the stream alive; any message from the service counts. */
  touch(): void {
    this.#silence?.heard();
  }

  /** The instance opened its bulk lane; false when it already has one (or is closed). */
  attachBulkLane(lane: BulkLane): boolean {
    if (this.#bulk || this.state === 'closed') return false;
    this.#bulk = lane;
    this.#openStreams++;
    return true;
  }

  /**
   * The service half-closed one of the instance's streams (`lane`: its bulk lane) while the instance
   * drains: that stream's side is ended here, and true is returned while the other is still open. A
   * stopping service half-closes both once its requests are answered, and one stream's end can reach
   * the gateway before the other's last answer: ending the instance then failed that answer's call
   * with SERVICE_DISCONNECTED (the SDK's stop, test/gate/sdk-integration.test.ts). The instance ends
   * with its last stream instead (or when it falls silent).
   */
  halfClosedWhileDraining(lane: boolean): boolean {
    if (this.state !== 'draining' || --this.#openStreams === 0) return false;
    if (lane) this.#bulk?.close();
    else this.#writes.close();
    return true;
  }

  override get bulkLane(): boolean {
    return this.#bulk !== undefined;
  }

  send(message: GateToServiceProto): boolean {
    if (this.state === 'closed') return false;
    try {
      const bytes = requestBytes(message);
      (this.#bulk?.takes(message, bytes) ? this.#bulk.writes : this.#writes).send(message, bytes);
      return true;
    } catch (err) {
      this.#log.warn({ err }, 'write to service stream failed');
      return false;
    }
  }

  /**
   * Resolves when a request's next message would be written at once: its account has nothing waiting
   * and the stream's send buffer has room (at once when so now, or when the stream is gone). Streamed
   * requests (recognition audio) wait on it so that a fast caller cannot make the gateway buffer
   * without bound when the service reads slowly; gRPC flow control then pushes back on the caller.
   */
  whenWritable(requestId?: number): Promise<void> {
    if (this.state === 'closed') return Promise.resolve();
    return (requestId !== undefined && this.#bulk?.carries(requestId) ? this.#bulk.writes : this.#writes).whenWritable(requestId);
  }

  override letGo(requestId: number): void {
    super.letGo(requestId);
    this.#writes.forget(requestId);
    this.#bulk?.forget(requestId);
  }

  /**
   * Sends `heartBeat{status:"Ok", interval}` now and every interval, and calls `onSilence` when the
   * service has been silent for 3 intervals + 1 s (docs/design.md, decisions), not counting the time
   * the gateway itself was stalled (PeerSilence).
   */
  startHeartbeats(intervalMs: number, onSilence: () => void): void {
    const beat = () => this.send({ heartBeat: { status: 'Ok', interval: intervalMs } });
    beat();
    const silence = (this.#silence = new PeerSilence(intervalMs));
    const silenceLimit = silenceLimitMs(intervalMs);
    this.#stopHeartbeats = every(intervalMs, () => {
      const silentMs = silence.check();
      if (silentMs > silenceLimit) {
        this.#log.warn({ silentMs }, 'service stream silent too long; dropping it');
        onSilence();
        return;
      }
      beat();
    });
  }

  /** Ends the gateway's side of the stream and stops the timers (once: close() calls it). */
  protected closeTransport(): void {
    this.#stopHeartbeats?.();
    this.#stopHeartbeats = undefined;
    this.#writes.close();
    this.#bulk?.close();
  }
}
