import type { GatewayConfig } from '../config/types.js';
import type { Directory, ServiceChange, ServiceEntry } from '../admission/directory.js';
import { gatewayError } from '../errors.js';
import type { Logger } from '../observe/logger.js';
import type { GatewayEvents } from '../observe/events.js';
import { BillingLedger } from './billing-ledger.js';
import { GateHeaders, type StringMap } from '../../proto/src/index.js';
import { predictOf, type GateRequest, type OpenOptions } from './open-options.js';
import { observeCall } from './call-observer.js';
import { CallTable } from './call-table.js';
import { targetName, type FallbackTarget, type TargetConfigCheck } from './failover.js';
import { Failover } from './failover-calls.js';
import type { GateInstance } from './instance.js';
import { InstancePool, type InstanceInfo } from './instance-pool.js';
import { LocalInstance, type LocalInstanceHandle, type LocalInstanceOptions } from './local-instance.js';
import type { ServiceCall } from './service-call.js';
import { serviceLabel } from './service-label.js';
import { ServiceRoutes } from './service-routes.js';
import { ServiceStreams } from './service-streams.js';
import { WakeOnRequest } from './wake-on-request.js';
import type { ServiceStream } from './service-session.js';
import { configuredCluster, type ClusterUpdateFor } from './cluster-update.js';
import { RecentCallers } from './recent-callers.js';

export type { GateRequest, InstanceInfo, LocalInstanceHandle, OpenOptions };

/**
 * The gateway's side of the model-service protocol, as plugins and the transports see it: `ready`
 * (wait for an instance, waking the service), `open` (a call to the least busy instance, with
 * failover), `shutdown`, and views of the instances. The work is its parts': the instance pool
 * (instance-pool.ts), the call table (call-table.ts), failover (failover-calls.ts), the instances'
 * streams and messages (service-streams.ts) and the timing of calls (call-observer.ts).
 */
export class Gate {
  readonly billing: BillingLedger;
  readonly #events: GatewayEvents;
  readonly #directory: Directory;
  readonly #config: GatewayConfig['gate'];
  readonly #log: Logger;
  readonly #pool: InstancePool;
  readonly #table: CallTable;
  readonly #routes: ServiceRoutes;
  readonly #failover: Failover;
  readonly #streams: ServiceStreams;
  /** The caller account of recent requests, for charges that name them; filled only while someone listens to `billing`. */
  readonly #recentCallers = new RecentCallers(RECENT_CALLERS);
  /** Services that should have a connected instance (config `required`, or launched by `npm start`). */
  readonly #expected = new Set<number>();
  readonly #wake: WakeOnRequest;
  #shuttingDown = false;

  constructor(
    directory: Directory,
    config: GatewayConfig['gate'],
    log: Logger,
    events: GatewayEvents,
    limits: { billingLedgerBytes?: number; instanceWaitersPerAccount?: number } = {},
    clusterUpdate: ClusterUpdateFor = configuredCluster(config.servers, config.currentServer),
  ) {
    this.#directory = directory;
    this.#config = config;
    this.#events = events;
    this.#log = log.child({ component: 'gate' });
    this.billing = new BillingLedger(this.#log, directory, events, limits.billingLedgerBytes);
    this.#table = new CallTable({ maxBufferedBytes: config.maxBufferedAnswerBytes, maxAnswerBytes: config.maxAnswerBytes });
    this.#pool = new InstancePool(directory, events, (instance, lost) => {
      for (const call of lost) this.#table.fail(call, gatewayError('SERVICE_DISCONNECTED', { args: { service: instance.service.name } }));
    });
    this.#routes = new ServiceRoutes(directory);
    // What failover and the service streams both work with.
    const shared = { pool: this.#pool, table: this.#table, log: this.#log, closed: () => this.#shuttingDown };
    this.#failover = new Failover({ ...shared, routes: this.#routes, retryBudget: config.retryBudget });
    this.#table.retryWith(this.#failover);
    this.#streams = new ServiceStreams({
      ...shared,
      directory,
      config,
      clusterUpdate,
      billing: this.billing,
      recentCallers: this.#recentCallers,
      events,
    });
    for (const service of directory.services()) if (service.required) this.#expected.add(service.id);
    directory.onServiceChange((change) => this.#onServiceChange(change));
    this.#wake = new WakeOnRequest({
      whenInstance: (serviceId, timeoutMs, signal) => this.whenInstance(serviceId, timeoutMs, signal),
      waitersPerAccount: limits.instanceWaitersPerAccount ?? 16,
      log: this.#log,
    });
  }

  /**
   * Resolves once a request for `service` can be sent, for the routes that wait (sync predict, chat):
   * at once when an instance is connected, or when the service does not wait (`open` then answers
   * NO_ACTIVE_INSTANCES) or has fallbacks to go to; otherwise after waiting for an instance and
   * waking the service (wake-on-request.ts). `signal` (or the function that makes it, called only
   * when the request waits) aborts when the caller leaves: the wait ends and frees its slot at once.
   */
  ready(
    service: ServiceEntry,
    caller: { readonly id: number; readonly name: string },
    signal?: AbortSignal | (() => AbortSignal),
  ): Promise<void> {
    // Not async: the usual answer (an instance is there) is one shared settled promise, not a new one per request.
    if (this.hasInstances(service.id) || service.fallbacks?.length) return READY;
    const target = (service.base && this.#directory.serviceById(service.base.serviceId)) || service;
    if (!(service.waitForInstanceMs || target.waitForInstanceMs)) return READY;
    return this.#wake.wait(service, target, caller.id, caller.name, typeof signal === 'function' ? signal() : signal);
  }

  /**
   * Sends a request to an instance of `service` (for a derived service: of its base service; when it
   * has none, for a predict: of its first fallback that has one) and returns the call whose answers
   * the caller reads. Throws NO_ACTIVE_INSTANCES or SERVICE_NOT_FITTED (400) or GATE_IS_SHUT_DOWN
   * (503) when it cannot be sent.
   */
  open(service: ServiceEntry, request: GateRequest, options: OpenOptions = {}): ServiceCall {
    if (this.#shuttingDown) throw gatewayError('GATE_IS_SHUT_DOWN');
    const { context } = options;
    context?.span?.enter('dispatch');
    const predict = predictOf(request);
    const chain = predict ? (options.fallbacks ?? this.#routes.fallbacksOf(service)) : NO_FALLBACKS;
    const picked = this.#failover.pick(service, predict, chain, options.headers ?? context?.headers, options.model, options.affinityKey);
    const { instance, routed, fallback } = picked;
    if (fallback && picked.predict !== predict) request = { predict: picked.predict! };

    const timeoutMs = Math.min(options.timeoutMs ?? (service.timeoutSec ?? this.#config.defaultTimeoutSec) * 1000, MAX_TIMER_MS);
    // Answers come from the target's instances, and the call table matches them by the target's ID.
    const call = this.#table.open(instance, routed.target.id, service.name, timeoutMs);
    call.servedBy = {
      name: fallback ? targetName(fallback) : serviceLabel(service),
      instance: instance.bootUuid,
      fallback: fallback !== undefined && fallback.service !== service,
    };
    if (this.#events.has('billing')) this.#rememberCaller(call.requestId, routed.headers);
    const headers = observeCall(this.#events, call, service, options.model, context, routed.headers);
    if (options.firstChunkTimeoutMs || options.idleTimeoutMs) {
      call.setStreamDeadlines({ firstChunkMs: options.firstChunkTimeoutMs ?? 0, idleMs: options.idleTimeoutMs ?? 0 }, service.name);
    }
    this.#failover.track(call, service, picked, headers, timeoutMs);
    // Last: a caller already gone fails the call here, and its observer and failover state see it settle.
    const signal = options.signal ?? context?.signal;
    if (signal) call.cancelOn(signal);
    this.#table.dispatch(call, { requestId: call.requestId, headers, ...withDeclaredConfig(request, instance) }, service.name);
    return call;
  }

  /**
   * Graceful shutdown: every instance gets `stopServing`, new requests are refused with
   * GATE_IS_SHUT_DOWN, in-flight calls get up to `drainTimeoutMs` to finish, then streams close.
   */
  async shutdown(): Promise<void> {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    const instances = this.#pool.close();
    for (const instance of instances) instance.send({ stopServing: { reason: 'gateway shutting down' } });
    await this.#table.drain(this.#config.drainTimeoutMs, gatewayError('GATE_IS_SHUT_DOWN'));
    for (const instance of instances) this.#pool.end(instance, 'gateway shutdown');
  }

  /** Handles one `processAsync` stream from its first message to its end (service-streams.ts). */
  acceptServiceStream(stream: ServiceStream, onRegistered?: () => void): void {
    this.#streams.accept(stream, onRegistered);
  }

  /**
   * Puts an in-process instance of `service` beside its dialled-in ones (the upstream connector's
   * HTTP engines). Its answers take the path a stream's messages take.
   */
  attachLocal(service: ServiceEntry, options: LocalInstanceOptions): LocalInstanceHandle {
    const instance = new LocalInstance(service, options, (from, message) => this.#streams.received(from, message), this.#log);
    const previous = this.#pool.previousOf(instance);
    if (previous) this.#pool.end(previous, 'replaced by a new local instance');
    this.#pool.add(instance);
    instance.log.info({ hostname: options.hostname }, 'local instance attached');
    return {
      instance,
      setServing: (serving) => {
        if (instance.state === 'closed' || this.#shuttingDown) return;
        const routed = this.#pool.isRouted(instance);
        if (serving && !routed && this.#pool.serve(instance)) {
          instance.log.info('local instance serving again');
        } else if (!serving && routed) {
          this.#pool.drain(instance);
          instance.log.warn('local instance taken out of routing');
        }
      },
      reportHealth: (health) => instance.reportHealth(health),
      detach: (reason) => this.#pool.end(instance, reason),
    };
  }

  /**
   * Checks the config of a request against each fallback target's registry model before the target
   * is tried (the gateway passes its Pipeline); a target the config does not fit is skipped.
   */
  checkFallbackConfigsWith(check: TargetConfigCheck): void {
    this.#failover.checkConfigsWith(check);
  }

  /** Marks a service as one that should always have a connected instance (health turns `degraded` without). */
  expectInstances(serviceId: number, expected = true): void {
    if (expected) this.#expected.add(serviceId);
    else this.#expected.delete(serviceId);
  }

  /**
   * A service changed at run time (the user-space API). A removed one loses its instances at once (its
   * calls in flight fail with SERVICE_DISCONNECTED, a dialled-in stream is ended); `required` says
   * whether the service is expected to have an instance.
   */
  #onServiceChange({ id, before, after }: ServiceChange): void {
    if (after?.required) this.#expected.add(id);
    else if (!after || before?.required) this.#expected.delete(id);
    if (!after) this.#pool.endService(id, 'service removed');
  }

  /** The expected services that have no serving instance now. */
  missingServices(): ServiceEntry[] {
    const missing: ServiceEntry[] = [];
    for (const id of this.#expected) {
      const service = this.#directory.serviceById(id);
      if (service && this.#pool.routedCount(id) === 0) missing.push(service);
    }
    return missing;
  }

  get defaultTimeoutSec(): number {
    return this.#config.defaultTimeoutSec;
  }

  /** Whether a request for the service could be sent now (a derived service: its base's instances). */
  hasInstances(serviceId: number): boolean {
    return this.#pool.hasInstances(serviceId);
  }

  /** Whether a predict for the service could be answered now: by its instances, or a fallback's. */
  canServe(serviceId: number): boolean {
    if (this.hasInstances(serviceId)) return true;
    const service = this.#directory.serviceById(serviceId);
    return service !== undefined && this.#routes.fallbacksOf(service).some((next) => this.hasInstances(next.service.id));
  }

  /** Calls `listener` with the service ID whenever an instance starts taking requests; returns the unsubscribe. */
  onInstance(listener: (serviceId: number) => void): () => void {
    return this.#pool.onInstance(listener);
  }

  /**
   * Resolves true as soon as a request for the service could be sent (see hasInstances), false when
   * `timeoutMs` passed or `signal` aborted first.
   */
  whenInstance(serviceId: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return this.#pool.whenInstance(serviceId, timeoutMs, signal);
  }

  instances(serviceId?: number): InstanceInfo[] {
    return this.#pool.list(serviceId);
  }

  #rememberCaller(requestId: number, headers: StringMap): void {
    const accountId = callerAccountId(headers);
    if (accountId) this.#recentCallers.remember(requestId, accountId);
  }
}

const NO_FALLBACKS: readonly FallbackTarget[] = [];
const READY: Promise<void> = Promise.resolve();

/**
 * The longest deadline a Node timer can hold (2^31 - 1 ms, about 24.8 days). A longer one overflows
 * and fires after 1 ms, so a caller's `timeoutSec` of 2,147,484 or more would time out at once.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** How many recent requests' caller accounts are kept for charges that name them. */
const RECENT_CALLERS = 10_000;

/**
 * docs/design.md, decisions: a request without config (none given, no default named config) gets an empty JSON
 * object when the instance's method descriptor declares a `config` input, rather than nothing.
 */
function withDeclaredConfig(request: GateRequest, session: GateInstance): GateRequest {
  if ('predict' in request && !request.predict.config && session.declaresConfig('predict')) {
    return { predict: { ...request.predict, config: { json: '{}' } } };
  }
  if ('batch' in request && !request.batch.config && session.declaresConfig('batch')) {
    return { batch: { ...request.batch, config: { json: '{}' } } };
  }
  if ('partialPredict' in request && !request.partialPredict.config && session.declaresConfig('partialPredict')) {
    return { partialPredict: { ...request.partialPredict, config: { json: '{}' } } };
  }
  return request;
}

/** The caller's account, as the gateway set it in the service headers. */
function callerAccountId(headers: StringMap): number | undefined {
  const id = Number(headers[GateHeaders.callerAccountId]);
  return id || undefined;
}
