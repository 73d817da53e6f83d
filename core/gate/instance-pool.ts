import { EventEmitter } from 'node:events';
import type { Directory } from '../admission/directory.js';
import type { GatewayEvents } from '../observe/events.js';
import type { EngineHealth, GateInstance, Instance, InstanceKind, InstanceLoad } from './instance.js';
import { pickInstance, withModel } from './routing.js';
import type { ServiceCall } from './service-call.js';
import { serviceLabel } from './service-label.js';

export interface InstanceInfo {
  serviceId: number;
  bootUuid: string;
  kind: InstanceKind;
  state: string;
  inFlight: number;
  hostname?: string;
  connectedAt: number;
  /** The instance's last load report, if it sends any. */
  load?: InstanceLoad;
  /** The version and image it announced, if any. */
  version?: number;
  image?: string;
  /** An in-process instance's engine health, as its owner last reported it. */
  engineHealth?: EngineHealth;
  /** Whether a dialled-in instance opened its bulk lane (core/gate/bulk-lane.ts). */
  bulkLane?: true;
}

/** Where the calls of an instance that ended go: the Gate fails them, or sends them to a fallback. */
export type LostCalls = (instance: GateInstance, calls: readonly ServiceCall[]) => void;

/**
 * The instances of every service: which are live (one per `serviceId:bootUuid`), which take new
 * requests, and which one takes the next (routing.ts). Instances enter by `add` (a registered stream,
 * an attached local instance) and leave by `end`; `drain`, `serve` and `replace` are the transitions
 * in between, each one the instance makes itself on the pool's request.
 */
export class InstancePool {
  readonly #directory: Directory;
  readonly #events: GatewayEvents;
  readonly #lost: LostCalls;
  /** Instances that take new requests, per service ID. */
  readonly #routable = new Map<number, Instance[]>();
  /** The live instance of each `serviceId:bootUuid` (a reconnect replaces the session). */
  readonly #live = new Map<string, Instance>();
  /** `instance` (serviceId): an instance started taking requests. Waiters listen here instead of polling. */
  readonly #changes = new EventEmitter().setMaxListeners(0);
  #rotation = 0;
  /** Shutting down: instances still answer their calls, none takes a new one. */
  #closed = false;

  constructor(directory: Directory, events: GatewayEvents, lost: LostCalls) {
    this.#directory = directory;
    this.#events = events;
    this.#lost = lost;
  }

  /** The live instance with the same service and boot UUID as `instance`, which it would replace. */
  previousOf(instance: Pick<GateInstance, 'service' | 'bootUuid'>): Instance | undefined {
    return this.#live.get(keyOf(instance));
  }

  /** Puts a new instance in service (routed unless the pool is shutting down). */
  add(instance: Instance): void {
    this.#live.set(keyOf(instance), instance);
    if (!this.#closed) this.#route(instance);
  }

  /**
   * A reconnect of the same process (same instanceBootUuid): `next` takes over routing and the old
   * one's in-flight calls (returned, for the call table to follow), and the old stream drains.
   */
  replace(previous: Instance, next: Instance): ServiceCall[] {
    this.#unroute(previous);
    const moved = previous.handOver(next);
    previous.log.info('instance reconnected; old stream replaced');
    this.add(next);
    return moved;
  }

  /** The instance stops taking new requests (stopServing, a failed health check); its calls go on. */
  drain(instance: Instance): void {
    instance.drain();
    this.#unroute(instance);
  }

  /** A drained local instance takes requests again. */
  serve(instance: Instance): boolean {
    if (this.#closed || !instance.serve()) return false;
    this.#route(instance);
    return true;
  }

  /** Whether the instance is among the routed ones. */
  isRouted(instance: GateInstance): boolean {
    return this.#routable.get(instance.service.id)?.includes(instance as Instance) ?? false;
  }

  /**
   * The instance ended (its stream closed or went silent, it was detached or replaced, the gateway
   * shuts down): it closes, leaves the pool, and its calls go to the Gate (LostCalls).
   */
  end(instance: Instance, reason: string): void {
    if (instance.state === 'closed') return;
    // Ended while still taking requests, without stopServing and not by our shutdown: a lost stream.
    const dropped = instance.state === 'serving' && !this.#closed;
    const lost = instance.close();
    this.#unroute(instance);
    const key = keyOf(instance);
    if (this.#live.get(key) === instance) this.#live.delete(key);
    this.#lost(instance, lost);
    instance.log.info({ reason, failedCalls: lost.length }, 'service instance disconnected');
    this.#events.emit('instance', {
      service: serviceLabel(instance.service),
      change: 'disconnected',
      reason,
      dropped,
      failedCalls: lost.length,
    });
  }

  /** Ends every instance of a service (it was removed at run time): as `end` does for each. */
  endService(serviceId: number, reason: string): void {
    for (const instance of [...this.#live.values()]) if (instance.service.id === serviceId) this.end(instance, reason);
  }

  /** Shutdown: every instance drains (the caller tells each service), none is routed again; returns them. */
  close(): Instance[] {
    this.#closed = true;
    const all = [...this.#live.values()];
    for (const instance of all) instance.drain();
    this.#routable.clear();
    return all;
  }

  /** The serving instance that takes a request (routing.ts). */
  pick(serviceId: number, model?: string, affinityKey?: string): Instance | undefined {
    const list = this.#routable.get(serviceId);
    if (!list || list.length === 0) return undefined;
    const candidates = withModel(list, model) as readonly Instance[];
    return pickInstance(candidates, this.#rotation++ % candidates.length, affinityKey) as Instance | undefined;
  }

  /** Whether a request for the service could be sent now (a derived service: its base's instances). */
  hasInstances(serviceId: number): boolean {
    const baseId = this.#directory.serviceById(serviceId)?.base?.serviceId ?? serviceId;
    return this.routedCount(baseId) > 0;
  }

  /** How many instances of the service take requests now. */
  routedCount(serviceId: number): number {
    return this.#routable.get(serviceId)?.length ?? 0;
  }

  /** Calls `listener` with the service ID whenever an instance starts taking requests; returns the unsubscribe. */
  onInstance(listener: (serviceId: number) => void): () => void {
    this.#changes.on('instance', listener);
    return () => this.#changes.off('instance', listener);
  }

  /**
   * Resolves true as soon as a request for the service could be sent (see hasInstances), false when
   * `timeoutMs` passed or `signal` aborted first.
   */
  async whenInstance(serviceId: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.hasInstances(serviceId)) return true;
    if (signal?.aborted || timeoutMs <= 0) return false;
    return new Promise<boolean>((resolve) => {
      const settle = (ready: boolean) => {
        clearTimeout(timer);
        off();
        signal?.removeEventListener('abort', onAbort);
        resolve(ready);
      };
      const off = this.onInstance(() => {
        if (this.hasInstances(serviceId)) settle(true);
      });
      const onAbort = () => settle(false);
      const timer = setTimeout(settle, timeoutMs, false);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  list(serviceId?: number): InstanceInfo[] {
    return [...this.#live.values()]
      .filter((s) => serviceId === undefined || s.service.id === serviceId)
      .map((s) => ({
        serviceId: s.service.id,
        bootUuid: s.bootUuid,
        kind: s.kind,
        state: s.state,
        inFlight: s.inFlight,
        hostname: s.hostname,
        connectedAt: s.connectedAt,
        load: s.load,
        version: s.version,
        image: s.image,
        engineHealth: s.engineHealth,
        bulkLane: s.bulkLane || undefined,
      }));
  }

  #route(instance: Instance): void {
    let list = this.#routable.get(instance.service.id);
    if (!list) this.#routable.set(instance.service.id, (list = []));
    list.push(instance);
    this.#changes.emit('instance', instance.service.id);
  }

  #unroute(instance: GateInstance): void {
    const list = this.#routable.get(instance.service.id);
    const index = list?.indexOf(instance as Instance) ?? -1;
    if (list && index >= 0) list.splice(index, 1);
  }
}

const keyOf = (instance: Pick<GateInstance, 'service' | 'bootUuid'>): string => `${instance.service.id}:${instance.bootUuid}`;
