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
 */
export interface GateInstance {
  readonly id: number;
  readonly kind: InstanceKind;
  readonly service: ServiceEntry;
  /** Stable across reconnects of the same process (`instanceBootUuid`); names a local instance. */
  readonly bootUuid: string;
  readonly hostname: string | undefined;
  readonly connectedAt: number;
  /** Calls whose answers this instance must deliver. */
  readonly calls: Map<number, ServiceCall>;
  state: InstanceState;
  readonly inFlight: number;
  readonly log: Logger;
  /** The latest load the instance reported (heartBeat headers); undefined when it reports none. */
  load: InstanceLoad | undefined;
  /**
   * Whether the instance's method descriptor declares a `config` input for `method` (docs/design.md,
   * decisions: such a method gets `{}` when the request has no config).
   */
  declaresConfig(method: string): boolean;
  /** Hands a message to the instance; false when it can no longer take any. */
  send(message: GateToServiceProto): boolean;
  /** Resolves when the instance can take more stream messages without the gateway buffering them. */
  whenWritable(): Promise<void>;
  /** Ends the instance's side; idempotent. */
  close(): void;
}

/** What an instance last said about its own load (proto/src/load-report.ts), and when. */
export interface InstanceLoad extends LoadReport {
  /** When the report arrived (ms since the epoch). */
  readonly at: number;
}

let nextInstanceId = 1;

/** A process-wide unique id for an instance (sessions and local instances share the sequence). */
export function newInstanceId(): number {
  return nextInstanceId++;
}

export type { ServiceEntry };
