import { EventEmitter, once } from 'node:events';
import type { GatewayConfig } from '../config/types.js';
import type { Directory, ServiceChange, ServiceEntry } from '../admission/directory.js';
import { gatewayError, type GatewayError } from '../errors.js';
import type { Logger } from '../observe/logger.js';
import type { GatewayEvents } from '../observe/events.js';
import { recordOfServiceHeaders, type RequestRecord } from '../observe/request-record.js';
import type { ServiceCallSpan } from '../observe/request-trace.js';
import { toApiErrorProto, fromServiceError } from './api-error.js';
import { BillingLedger } from './billing-ledger.js';
import type {
  BatchRequestProto,
  ExtendedRequestProto,
  FitRequestProto,
  GateToServiceProto,
  PartialPredictRequestProto,
  PredictRequestProto,
  ServiceToGateProto,
  StartServingProto,
  StringMap,
} from '../../proto/src/index.js';
import { DERIVED_ACCOUNT_ID_HEADER, DERIVED_SERVICE_ID_HEADER, FITTED_MODEL_DIR_HEADER, GateHeaders, parseLoadReport } from '../../proto/src/index.js';
import { backoffMs, isRetryable, retargetPredict, targetName, unfitReason, withSkipped, type FallbackTarget, type TargetConfigCheck } from './failover.js';
import type { GateInstance, InstanceKind, InstanceLoad } from './instance.js';
import { pickInstance, withModel } from './routing.js';
import { LocalInstance, type LocalInstanceOptions } from './local-instance.js';
import { ServiceCall, type ServiceCallHooks } from './service-call.js';
import { WakeOnRequest } from './wake-on-request.js';
import { serviceLabel } from './service-label.js';
import { ServiceSession, type ServiceStream } from './service-session.js';
import { configuredCluster, type ClusterUpdateFor } from './cluster-update.js';
import { RecentCallers } from './recent-callers.js';

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
  /** Aborting it (caller gone, caller cancelled) fails the call and sends `cancel` to the service. */
  signal?: AbortSignal;
  /** Headers for the service (Z-requestId, caller and billing headers). */
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

/**
 * Headers a base service receives on a request for one of its derived (fitted) services: which fitted
 * model to use and for which service. Set only by the Gate: a caller's own values are dropped.
 */
const RESERVED_HEADERS = new Set<string>([FITTED_MODEL_DIR_HEADER, DERIVED_SERVICE_ID_HEADER, DERIVED_ACCOUNT_ID_HEADER]);

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
}

/** What the owner of an in-process instance controls: whether it takes requests, and its removal. */
export interface LocalInstanceHandle {
  readonly instance: GateInstance;
  /** false takes the instance out of routing (a failed health check), true puts it back. */
  setServing(serving: boolean): void;
  /** Removes the instance; calls still in flight fail with SERVICE_DISCONNECTED. */
  detach(reason: string): void;
}

/**
 * The gateway's side of the model-service protocol: it accepts `processAsync` streams and in-process
 * instances (GateInstance), keeps the instances of each service, routes requests to the least busy
 * one and matches answers to requests by requestId.
 */
export class Gate {
  readonly billing: BillingLedger;
  readonly #events: GatewayEvents;
  readonly #directory: Directory;
  readonly #config: GatewayConfig['gate'];
  readonly #clusterUpdate: ClusterUpdateFor;
  readonly #log: Logger;
  /** Instances that take new requests, per service ID. */
  readonly #routable = new Map<number, GateInstance[]>();
  /** The live instance of each `serviceId:bootUuid` (a reconnect replaces the session). */
  readonly #byInstance = new Map<string, GateInstance>();
  readonly #calls = new Map<number, CallEntry>();
  /**
   * `instance` (serviceId): an instance started taking requests; `idle`: the last call in flight
   * settled. Waiters listen here instead of polling instance or call counts.
   */
  readonly #changes = new EventEmitter().setMaxListeners(0);
  /** What every call asks of the Gate, shared by all calls. */
  readonly #callHooks: ServiceCallHooks;
  /** The caller account of recent requests, for charges that name them; filled only while someone listens to `billing`. */
  readonly #recentCallers = new RecentCallers(RECENT_CALLERS);
  /** Services that should have a connected instance (config `required`, or launched by `npm start`). */
  readonly #expected = new Set<number>();
  readonly #wake: WakeOnRequest;
  /** The registry check each fallback target's config must pass before it is tried. */
  #targetCheck: TargetConfigCheck | undefined;
  #nextRequestId = 1;
  #rotation = 0;
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
    this.#clusterUpdate = clusterUpdate;
    this.#events = events;
    this.#log = log.child({ component: 'gate' });
    this.billing = new BillingLedger(this.#log, directory, events, limits.billingLedgerBytes);
    this.#callHooks = {
      send: (call, partialPredict) => this.#sessionOf(call)?.send({ requestId: call.requestId, partialPredict }),
      whenWritable: (call) => this.#sessionOf(call)?.whenWritable() ?? Promise.resolve(),
      cancel: (call) => this.#sessionOf(call)?.send({ requestId: call.requestId, cancel: { requestIdToCancel: call.requestId } }),
      release: (call) => {
        const entry = this.#calls.get(call.requestId);
        if (!entry) return;
        this.#calls.delete(call.requestId);
        entry.session?.calls.delete(call.requestId);
        if (entry.retry) clearTimeout(entry.retry);
        if (entry.timer) clearTimeout(entry.timer);
        entry.signal?.removeEventListener('abort', call);
        this.#observeSettled(entry, call);
        if (this.#calls.size === 0) this.#changes.emit('idle');
      },
      maxBufferedBytes: config.maxBufferedAnswerBytes,
      maxAnswerBytes: config.maxAnswerBytes,
    };
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
  async ready(service: ServiceEntry, caller: { readonly id: number; readonly name: string }, signal?: AbortSignal | (() => AbortSignal)): Promise<void> {
    if (this.hasInstances(service.id) || service.fallbacks?.length) return;
    const target = (service.base && this.#directory.serviceById(service.base.serviceId)) || service;
    if (!(service.waitForInstanceMs || target.waitForInstanceMs)) return;
    await this.#wake.wait(service, target, caller.id, caller.name, typeof signal === 'function' ? signal() : signal);
  }

  /**
   * Checks the config of a request against each fallback target's registry model before the target
   * is tried (the gateway passes its Pipeline); a target the config does not fit is skipped.
   */
  checkFallbackConfigsWith(check: TargetConfigCheck): void {
    this.#targetCheck = check;
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
    if (after) return;
    for (const instance of [...this.#byInstance.values()]) {
      if (instance.service.id === id) this.#onSessionEnded(instance, 'service removed');
    }
  }

  /** The expected services that have no serving instance now. */
  missingServices(): ServiceEntry[] {
    const missing: ServiceEntry[] = [];
    for (const id of this.#expected) {
      const service = this.#directory.serviceById(id);
      if (service && (this.#routable.get(id)?.length ?? 0) === 0) missing.push(service);
    }
    return missing;
  }

  get defaultTimeoutSec(): number {
    return this.#config.defaultTimeoutSec;
  }

  /**
   * Handles one `processAsync` stream from its first message to its end. A stream that has not
   * registered within `registrationTimeoutMs` is closed with START_SERVING_TIMEOUT: until then its
   * peer is unauthenticated, and thousands of idle streams must not stay open. `onRegistered` runs
   * once the stream's startServing is accepted (the gRPC server then raises its message limit).
   */
  acceptServiceStream(stream: ServiceStream, onRegistered?: () => void): void {
    let session: ServiceSession | undefined;
    let finished = false;
    const finish = (reason: string) => {
      if (finished) return;
      finished = true;
      clearTimeout(registration);
      if (session) this.#onSessionEnded(session, reason);
      else endQuietly(stream);
    };
    const registration = setTimeout(() => {
      if (session || finished) return;
      const error = gatewayError('START_SERVING_TIMEOUT', { args: { timeoutMs: this.#config.registrationTimeoutMs } });
      this.#log.debug('service stream closed: no startServing in time');
      writeQuietly(stream, { error: toApiErrorProto(error) });
      finish('no startServing in time');
    }, this.#config.registrationTimeoutMs);
    stream.on('data', (message: ServiceToGateProto) => {
      if (finished) return;
      if (session) {
        session.touch();
        this.#onServiceMessage(session, message);
        return;
      }
      session = this.#register(stream, message);
      if (!session) return finish('registration refused');
      clearTimeout(registration);
      onRegistered?.();
    });
    stream.on('end', () => finish('stream ended by the service'));
    stream.on('cancelled', () => finish('stream cancelled'));
    stream.on('error', (err: Error) => {
      this.#log.debug({ err: err.message }, 'service stream error');
      finish(`stream error: ${err.message}`);
    });
  }

  #register(stream: ServiceStream, message: ServiceToGateProto): ServiceSession | undefined {
    const refuse = (error: GatewayError) => {
      this.#log.warn({ code: error.grpcCode }, `service stream refused: ${error.message}`);
      stream.write({ error: toApiErrorProto(error) });
      return undefined;
    };
    if (message.body !== 'startServing' || !message.startServing) {
      return refuse(gatewayError('START_SERVING_REQUIRED', { args: { got: message.body } }));
    }
    const start: StartServingProto = message.startServing;
    const service = this.#directory.serviceForConnectionToken(start.connectionToken ?? '');
    if (!service) return refuse(gatewayError('INSTANCE_BY_TOKEN_NOT_FOUND'));
    if (this.#shuttingDown) return refuse(gatewayError('GATE_IS_SHUT_DOWN'));

    const session = new ServiceSession(stream, service, start, this.#log);
    const key = `${service.id}:${session.bootUuid}`;
    const previous = this.#byInstance.get(key);
    if (previous) this.#replace(previous, session);
    this.#byInstance.set(key, session);
    this.#routableOf(service.id).push(session);
    this.#changes.emit('instance', service.id);

    session.send({ serviceInfo: { accountId: service.accountId, modelId: service.id, modelName: service.name } });
    const cluster = this.#clusterUpdate(stream.getHost());
    if (cluster) session.send({ cluster });
    session.startHeartbeats(this.#config.heartbeatIntervalMs, () => this.#onSessionEnded(session, 'heartbeat timeout'));
    session.log.info({ hostname: start.hostname, version: start.version, reconnect: Boolean(previous) }, 'service instance connected');
    this.#events.emit('instance', { service: serviceLabel(service), change: 'connected', reconnect: Boolean(previous) });
    return session;
  }

  /**
   * A reconnect of the same process (same instanceBootUuid): the new stream takes over routing and
   * the old one's in-flight calls, and the old stream stays readable so late answers still arrive.
   */
  #replace(previous: GateInstance, next: GateInstance): void {
    this.#unroute(previous);
    previous.state = 'draining';
    for (const [requestId, call] of previous.calls) {
      next.calls.set(requestId, call);
      const entry = this.#calls.get(requestId);
      if (entry) entry.session = next;
    }
    previous.calls.clear();
    previous.log.info('instance reconnected; old stream replaced');
  }

  /**
   * Puts an in-process instance of `service` beside its dialled-in ones (the upstream connector's
   * HTTP engines). Its answers take the path a stream's messages take.
   */
  attachLocal(service: ServiceEntry, options: LocalInstanceOptions): LocalInstanceHandle {
    const instance = new LocalInstance(service, options, (from, message) => this.#onServiceMessage(from, message), this.#log);
    const key = `${service.id}:${instance.bootUuid}`;
    const previous = this.#byInstance.get(key);
    if (previous) this.#onSessionEnded(previous, 'replaced by a new local instance');
    this.#byInstance.set(key, instance);
    if (!this.#shuttingDown) this.#routableOf(service.id).push(instance);
    this.#changes.emit('instance', service.id);
    instance.log.info({ hostname: options.hostname }, 'local instance attached');
    return {
      instance,
      setServing: (serving) => {
        if (instance.state === 'closed' || this.#shuttingDown) return;
        const list = this.#routableOf(service.id);
        const routed = list.includes(instance);
        if (serving && !routed) {
          instance.state = 'serving';
          list.push(instance);
          this.#changes.emit('instance', service.id);
          instance.log.info('local instance serving again');
        } else if (!serving && routed) {
          instance.state = 'draining';
          this.#unroute(instance);
          instance.log.warn('local instance taken out of routing');
        }
      },
      detach: (reason) => this.#onSessionEnded(instance, reason),
    };
  }

  #onServiceMessage(session: GateInstance, message: ServiceToGateProto): void {
    switch (message.body) {
      case 'heartBeat': {
        const load = parseLoadReport(message.headers);
        if (load) session.load = { ...load, at: Date.now() };
        return;
      }
      case 'stopServing':
        session.state = 'draining';
        this.#unroute(session);
        session.log.info({ reason: message.stopServing?.reason }, 'service stopped serving; draining');
        return;
      case 'deferredBillingCharge':
      case 'deferredBillingCharges':
        this.billing.record(session.service, message, this.#recentCallers.accountOf(Number(message.requestId ?? 0)));
        return;
      case 'startServing':
        session.log.warn('repeated startServing on a registered stream ignored');
        return;
      case undefined:
        session.log.warn({ requestId: message.requestId }, 'service message without a body ignored');
        return;
      default:
        this.#deliver(session, message);
    }
  }

  #deliver(session: GateInstance, message: ServiceToGateProto): void {
    const requestId = Number(message.requestId ?? 0);
    const entry = this.#calls.get(requestId);
    if (!entry) {
      session.log.debug({ requestId, body: message.body }, 'answer for a request that is no longer waiting');
      return;
    }
    // An instance answers only requests routed to its own service.
    if (entry.call.serviceId !== session.service.id) {
      session.log.warn({ requestId }, 'answer for another service\'s request dropped');
      return;
    }
    if (message.body === 'error') {
      const error = fromServiceError(message.error ?? {}, session.service.name);
      if (!this.#retry(entry, error)) entry.call.fail(error);
    } else {
      if (entry.observed) this.#observeChunk(entry);
      entry.call.deliver(message);
    }
  }

  #rememberCaller(requestId: number, headers: StringMap | undefined): void {
    const accountId = Number(headers?.[GateHeaders.callerAccountId]);
    if (!accountId) return;
    this.#recentCallers.remember(requestId, accountId);
  }

  /** Timing of an answer frame: time to the first, then the gaps between frames of a stream. */
  #observeChunk(entry: CallEntry): void {
    const now = performance.now();
    if (entry.chunks++ === 0) {
      entry.firstChunkAt = now;
      entry.span?.firstByte();
    }
    else if (this.#events.has('chunkGap')) this.#events.emit('chunkGap', { service: entry.serviceLabel, ms: now - entry.lastChunkAt });
    entry.lastChunkAt = now;
  }

  /** A call settled: its wait counts to its HTTP request's record, and the `serviceCall` event. */
  #observeSettled(entry: CallEntry, call: ServiceCall): void {
    if (!entry.observed) return;
    const durationMs = performance.now() - entry.openedAt;
    if (entry.record) entry.record.serviceWaitMs += durationMs;
    entry.span?.end(call.failureCode ?? 'ok', entry.chunks);
    if (this.#events.has('serviceCall')) {
      this.#events.emit('serviceCall', {
        service: entry.serviceLabel,
        outcome: call.failureCode ?? 'ok',
        durationMs,
        firstChunkMs: entry.chunks > 0 ? entry.firstChunkAt - entry.openedAt : undefined,
        chunks: entry.chunks,
      });
    }
  }

  #onSessionEnded(session: GateInstance, reason: string): void {
    if (session.state === 'closed') return;
    // Ended while still taking requests, without stopServing and not by our shutdown: a lost stream.
    const dropped = session.state === 'serving' && !this.#shuttingDown;
    session.close();
    this.#unroute(session);
    const key = `${session.service.id}:${session.bootUuid}`;
    if (this.#byInstance.get(key) === session) this.#byInstance.delete(key);
    const lost = [...session.calls.values()];
    session.calls.clear();
    for (const call of lost) {
      const error = gatewayError('SERVICE_DISCONNECTED', { args: { service: session.service.name } });
      const entry = this.#calls.get(call.requestId);
      if (!entry || !this.#retry(entry, error)) call.fail(error);
    }
    session.log.info({ reason, failedCalls: lost.length }, 'service instance disconnected');
    this.#events.emit('instance', { service: serviceLabel(session.service), change: 'disconnected', reason, dropped, failedCalls: lost.length });
  }

  /** The session that answers a call in flight (undefined once it settled). */
  #sessionOf(call: ServiceCall): GateInstance | undefined {
    return this.#calls.get(call.requestId)?.session;
  }

  #routableOf(serviceId: number): GateInstance[] {
    let list = this.#routable.get(serviceId);
    if (!list) this.#routable.set(serviceId, (list = []));
    return list;
  }

  #unroute(session: GateInstance): void {
    const list = this.#routable.get(session.service.id);
    const index = list?.indexOf(session) ?? -1;
    if (list && index >= 0) list.splice(index, 1);
  }

  /** The serving instance that takes a request (core/gate/routing.ts). */
  #pick(serviceId: number, model?: string, affinityKey?: string): GateInstance | undefined {
    const list = this.#routable.get(serviceId);
    if (!list || list.length === 0) return undefined;
    const candidates = withModel(list, model);
    return pickInstance(candidates, this.#rotation++ % candidates.length, affinityKey);
  }

  /** Whether a request for the service could be sent now (a derived service: its base's instances). */
  hasInstances(serviceId: number): boolean {
    const baseId = this.#directory.serviceById(serviceId)?.base?.serviceId ?? serviceId;
    return (this.#routable.get(baseId)?.length ?? 0) > 0;
  }

  /** Whether a predict for the service could be answered now: by its instances, or a fallback's. */
  canServe(serviceId: number): boolean {
    if (this.hasInstances(serviceId)) return true;
    const service = this.#directory.serviceById(serviceId);
    return service !== undefined && this.#fallbacksOf(service).some((next) => this.hasInstances(next.service.id));
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
        this.#changes.off('instance', onInstance);
        signal?.removeEventListener('abort', onAbort);
        resolve(ready);
      };
      const onInstance = () => {
        if (this.hasInstances(serviceId)) settle(true);
      };
      const onAbort = () => settle(false);
      const timer = setTimeout(settle, timeoutMs, false);
      this.#changes.on('instance', onInstance);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  instances(serviceId?: number): InstanceInfo[] {
    return [...this.#byInstance.values()]
      .filter((s) => serviceId === undefined || s.service.id === serviceId)
      .map((s) => ({ serviceId: s.service.id, bootUuid: s.bootUuid, kind: s.kind, state: s.state, inFlight: s.inFlight, hostname: s.hostname, connectedAt: s.connectedAt, load: s.load }));
  }

  /**
   * The service whose instances serve `service`, and the headers that tell them which model to use.
   * A derived (fitted) service is served by its base service, told the fitted model's directory;
   * before its first successful fit it cannot be called (SERVICE_NOT_FITTED, 400).
   */
  #route(service: ServiceEntry, given: StringMap | undefined): { target: ServiceEntry; headers: StringMap } {
    let headers = given ?? {};
    for (const name in headers) {
      if (RESERVED_HEADERS.has(name.toUpperCase())) {
        headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !RESERVED_HEADERS.has(k.toUpperCase())));
        break;
      }
    }
    const base = service.base;
    if (!base) return { target: service, headers };
    if (!base.ready) throw gatewayError('SERVICE_NOT_FITTED', { args: { service: service.name } });
    const target = this.#directory.serviceById(base.serviceId);
    if (!target) throw gatewayError('NO_ACTIVE_INSTANCES', { args: { service: service.name } });
    return {
      target,
      headers: {
        ...headers,
        [FITTED_MODEL_DIR_HEADER]: base.modelDir,
        [DERIVED_SERVICE_ID_HEADER]: String(service.id),
        [DERIVED_ACCOUNT_ID_HEADER]: String(service.accountId),
      },
    };
  }

  /**
   * Sends a request to an instance of `service` (for a derived service: of its base service) and
   * returns the call whose answers the caller reads. Throws NO_ACTIVE_INSTANCES or SERVICE_NOT_FITTED
   * (400) or GATE_IS_SHUT_DOWN (503) when it cannot be sent.
   */
  open(service: ServiceEntry, request: GateRequest, options: OpenOptions = {}): ServiceCall {
    if (this.#shuttingDown) throw gatewayError('GATE_IS_SHUT_DOWN');
    const record = recordOfServiceHeaders(options.headers);
    record?.trace?.enter('dispatch');
    // Only a predict can move to another service: other requests carry more than one message.
    const chain = predictOf(request) ? [...(options.fallbacks ?? this.#fallbacksOf(service))] : [];
    let routed = this.#route(service, options.headers);
    let first: FallbackTarget = { service };
    let session = this.#pick(routed.target.id, options.model, options.affinityKey);
    let noInstance: GatewayError | undefined;
    const skipped: string[] = [];
    while (!session) {
      noInstance ??= routed.target === service
        ? gatewayError('NO_ACTIVE_INSTANCES', { args: { service: service.name } })
        : gatewayError('NO_ACTIVE_INSTANCES', { args: { service: service.name }, message: `Service '${service.name}' is served by '${routed.target.name}', which has no active instances` });
      const next = chain.shift();
      if (!next) throw withSkipped(noInstance, skipped);
      const unfit = unfitReason(next, predictOf(request)!, callerAccountOf(options.headers, service), this.#targetCheck);
      if (unfit) {
        skipped.push(unfit);
        continue;
      }
      first = next;
      routed = this.#route(next.service, options.headers);
      session = this.#pick(routed.target.id, next.model);
    }
    if (first.service !== service) {
      this.#log.info({ service: service.name, servedBy: targetName(first) }, 'no instance; the request goes to a fallback');
      request = { predict: retargetPredict(predictOf(request)!, first.model) };
    }
    const { target, headers } = routed;

    const requestId = this.#nextRequestId++;
    if (this.#events.has('billing')) this.#rememberCaller(requestId, options.headers);
    const timeoutMs = Math.min(options.timeoutMs ?? (service.timeoutSec ?? this.#config.defaultTimeoutSec) * 1000, MAX_TIMER_MS);
    const signal = options.signal;

    // Answers come from the target's instances, and #deliver matches them by the target's ID.
    const call = new ServiceCall(requestId, target.id, this.#callHooks);
    call.servedBy = { name: targetName(first), instance: session.bootUuid, fallback: first.service !== service };
    if (record) record.service = service;
    const span = record?.trace?.serviceCall(serviceLabel(service), options.model ?? service.defaultModel);
    // The service's spans become children of this call's span, not of the caller's.
    if (span) headers.traceparent = span.traceparent;
    const observed = record !== undefined || this.#events.has('serviceCall') || this.#events.has('chunkGap');
    const entry: CallEntry = {
      call, session, timer: undefined, signal, request, headers: options.headers, chain, skipped,
      callerAccountId: callerAccountOf(options.headers, service),
      attempts: 0, deadline: timeoutMs > 0 ? Date.now() + timeoutMs : Infinity, retry: undefined,
      record, observed, span,
      serviceLabel: observed ? serviceLabel(service) : '',
      openedAt: observed ? performance.now() : 0, firstChunkAt: 0, lastChunkAt: 0, chunks: 0,
    };
    this.#calls.set(requestId, entry);
    session.calls.set(requestId, call);

    if (timeoutMs > 0 && Number.isFinite(timeoutMs)) entry.timer = setTimeout(expire, timeoutMs, call, service.name, timeoutMs);
    if (options.firstChunkTimeoutMs || options.idleTimeoutMs) {
      call.setStreamDeadlines({ firstChunkMs: options.firstChunkTimeoutMs ?? 0, idleMs: options.idleTimeoutMs ?? 0 }, service.name);
    }
    if (signal?.aborted) {
      call.fail(gatewayError('REQUEST_CANCELED'));
      return call;
    }
    signal?.addEventListener('abort', call, { once: true });

    if (!session.send({ requestId, headers, ...withDeclaredConfig(request, session) })) {
      call.fail(gatewayError('SERVICE_DISCONNECTED', { args: { service: service.name } }));
    }
    return call;
  }

  /** The configured fallbacks of a service, resolved (unknown ones were refused at boot). */
  #fallbacksOf(service: ServiceEntry): FallbackTarget[] {
    const refs = service.fallbacks;
    if (!refs?.length) return [];
    const out: FallbackTarget[] = [];
    for (const ref of refs) {
      const [account, name, ...model] = ref.split('/');
      const account_ = account === undefined ? undefined : this.#directory.findAccount(account);
      const target = account_ && name ? this.#directory.findService(account_, name) : undefined;
      if (target) out.push(model.length ? { service: target, model: model.join('/') } : { service: target });
    }
    return out;
  }

  /**
   * Sends a failed predict to the next service of its chain, after a backoff, when nothing of the
   * answer has reached the caller yet, the failure is one a retry may fix, the retry budget allows
   * and the deadline leaves time. True when the call goes on (the caller sees nothing of the failure).
   */
  #retry(entry: CallEntry, error: GatewayError): boolean {
    const { call } = entry;
    if (call.settled || call.answered || !predictOf(entry.request) || entry.chain.length === 0) return false;
    if (entry.attempts >= this.#config.retryBudget || !isRetryable(error)) return false;
    const wait = backoffMs(++entry.attempts);
    if (Date.now() + wait >= entry.deadline) return false;
    entry.session?.calls.delete(call.requestId);
    entry.session = undefined;
    this.#log.info({ requestId: call.requestId, code: error.code, attempt: entry.attempts, next: targetName(entry.chain[0]!) }, 'request failed before its answer; trying the next service');
    entry.retry = setTimeout(() => {
      entry.retry = undefined;
      if (this.#calls.get(call.requestId) === entry && !call.settled) this.#resend(entry, error);
    }, wait);
    return true;
  }

  /** Sends the request of a call in its backoff to the first service of its chain that has an instance. */
  #resend(entry: CallEntry, lastError: GatewayError): void {
    const { call } = entry;
    for (let next = entry.chain.shift(); next; next = entry.chain.shift()) {
      const unfit = unfitReason(next, predictOf(entry.request)!, entry.callerAccountId, this.#targetCheck);
      if (unfit) {
        entry.skipped.push(unfit);
        continue;
      }
      let routed: { target: ServiceEntry; headers: StringMap };
      try {
        routed = this.#route(next.service, entry.headers);
      } catch (err) {
        lastError = err as GatewayError;
        continue;
      }
      const session = this.#shuttingDown ? undefined : this.#pick(routed.target.id, next.model);
      if (!session) {
        lastError = gatewayError('NO_ACTIVE_INSTANCES', { args: { service: next.service.name } });
        continue;
      }
      entry.session = session;
      call.serviceId = routed.target.id;
      call.servedBy = { name: targetName(next), instance: session.bootUuid, fallback: true };
      session.calls.set(call.requestId, call);
      const request = { predict: retargetPredict(predictOf(entry.request)!, next.model) };
      if (session.send({ requestId: call.requestId, headers: routed.headers, ...request })) return;
      session.calls.delete(call.requestId);
      entry.session = undefined;
      lastError = gatewayError('SERVICE_DISCONNECTED', { args: { service: next.service.name } });
    }
    call.fail(withSkipped(lastError, entry.skipped));
  }

  /**
   * Graceful shutdown: every instance gets `stopServing`, new requests are refused with
   * GATE_IS_SHUT_DOWN, in-flight calls get up to `drainTimeoutMs` to finish, then streams close.
   */
  async shutdown(): Promise<void> {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    const sessions = [...this.#byInstance.values()];
    for (const session of sessions) {
      session.send({ stopServing: { reason: 'gateway shutting down' } });
      session.state = 'draining';
    }
    this.#routable.clear();
    if (this.#calls.size > 0) {
      // Until the last call settles (the `idle` event) or the drain time is up, whichever comes first.
      await once(this.#changes, 'idle', { signal: AbortSignal.timeout(this.#config.drainTimeoutMs) }).catch(() => undefined);
    }
    for (const { call } of [...this.#calls.values()]) call.fail(gatewayError('GATE_IS_SHUT_DOWN'));
    for (const session of sessions) this.#onSessionEnded(session, 'gateway shutdown');
  }
}

/**
 * The longest deadline a Node timer can hold (2^31 - 1 ms, about 24.8 days). A longer one overflows
 * and fires after 1 ms, so a caller's `timeoutSec` of 2,147,484 or more would time out at once.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** How many recent requests' caller accounts are kept for charges that name them. */
const RECENT_CALLERS = 10_000;

/**
 * A call in flight: the instance that answers it (it moves on a reconnect, and to a fallback
 * service; none during a retry's backoff), its deadline and abort signal, and what a retry needs.
 */
interface CallEntry {
  readonly call: ServiceCall;
  session: GateInstance | undefined;
  timer: NodeJS.Timeout | undefined;
  readonly signal: AbortSignal | undefined;
  /** The HTTP request the call serves, when it came through `http.serviceHeaders()`. */
  readonly record: RequestRecord | undefined;
  /** Whether timings are taken (someone listens, or an HTTP request waits for its record). */
  readonly observed: boolean;
  /** The call's trace span, when its request is traced. */
  readonly span: ServiceCallSpan | undefined;
  readonly serviceLabel: string;
  readonly openedAt: number;
  firstChunkAt: number;
  lastChunkAt: number;
  chunks: number;
  /** The request as first sent, and the caller's headers (a fallback is routed afresh). */
  readonly request: GateRequest;
  readonly headers: StringMap | undefined;
  /** The services still to try, in order. */
  readonly chain: FallbackTarget[];
  /** Fallbacks skipped (the caller may not call them, or the config does not fit), with why: for the final error. */
  readonly skipped: string[];
  /** Whose request it is, for the access check of each fallback. */
  readonly callerAccountId: number;
  attempts: number;
  readonly deadline: number;
  retry: NodeJS.Timeout | undefined;
}

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

/** The predict deadline of a call passed (a timer callback shared by every call). */
function expire(call: ServiceCall, serviceName: string, timeoutMs: number): void {
  call.fail(gatewayError('PREDICT_TIMEOUT', { args: { service: serviceName, timeoutSec: timeoutMs / 1000 } }), true);
}

function writeQuietly(stream: ServiceStream, message: GateToServiceProto): void {
  try {
    stream.write(message);
  } catch {
    // Already closed by the peer.
  }
}

/** The caller's account, as the gateway set it in the service headers; else the addressed service's owner. */
function callerAccountOf(headers: StringMap | undefined, service: ServiceEntry): number {
  const id = Number(headers?.[GateHeaders.callerAccountId]);
  return Number.isInteger(id) ? id : service.accountId;
}

function predictOf(request: GateRequest): PredictRequestProto | undefined {
  return 'predict' in request ? request.predict : undefined;
}

function endQuietly(stream: ServiceStream): void {
  try {
    stream.end();
  } catch {
    // Already closed by the peer.
  }
}
