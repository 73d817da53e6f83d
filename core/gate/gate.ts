import type { GatewayConfig } from '../config/types.js';
import type { Directory, ServiceEntry } from '../directory.js';
import { gatewayError, type GatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import { toApiErrorProto, fromServiceError } from './api-error.js';
import { BillingLedger } from './billing-ledger.js';
import type {
  BatchRequestProto,
  ExtendedRequestProto,
  FitRequestProto,
  PartialPredictRequestProto,
  PredictRequestProto,
  ServiceToGateProto,
  StartServingProto,
  StringMap,
} from '../../proto/src/index.js';
import { DERIVED_ACCOUNT_ID_HEADER, DERIVED_SERVICE_ID_HEADER, FITTED_MODEL_DIR_HEADER } from '../../proto/src/index.js';
import { ServiceCall, type ServiceCallHooks } from './service-call.js';
import { ServiceSession, type ServiceStream } from './service-session.js';

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
  /** Aborting it (caller gone, caller cancelled) fails the call and sends `cancel` to the service. */
  signal?: AbortSignal;
  /** Headers for the service (Z-requestId, caller and billing headers). */
  headers?: StringMap;
}

/**
 * Headers a base service receives on a request for one of its derived (fitted) services: which fitted
 * model to use and for which service. Set only by the Gate: a caller's own values are dropped.
 */
const RESERVED_HEADERS = new Set<string>([FITTED_MODEL_DIR_HEADER, DERIVED_SERVICE_ID_HEADER, DERIVED_ACCOUNT_ID_HEADER]);

export interface InstanceInfo {
  serviceId: number;
  bootUuid: string;
  state: string;
  inFlight: number;
  hostname?: string;
  connectedAt: number;
}

/**
 * The gateway's side of the model-service protocol: it accepts `processAsync` streams, keeps the
 * connected instances of each service, routes requests to the least busy one and matches answers
 * to requests by requestId.
 */
export class Gate {
  readonly billing: BillingLedger;
  readonly #directory: Directory;
  readonly #config: GatewayConfig['gate'];
  readonly #log: Logger;
  /** Sessions that take new requests, per service ID. */
  readonly #routable = new Map<number, ServiceSession[]>();
  /** The live session of each instance, keyed `serviceId:bootUuid`. */
  readonly #byInstance = new Map<string, ServiceSession>();
  readonly #calls = new Map<number, CallEntry>();
  /** What every call asks of the Gate, shared by all calls. */
  readonly #callHooks: ServiceCallHooks = {
    send: (call, partialPredict) => this.#sessionOf(call)?.send({ requestId: call.requestId, partialPredict }),
    whenWritable: (call) => this.#sessionOf(call)?.whenWritable() ?? Promise.resolve(),
    cancel: (call) => this.#sessionOf(call)?.send({ requestId: call.requestId, cancel: { requestIdToCancel: call.requestId } }),
    release: (call) => {
      const entry = this.#calls.get(call.requestId);
      if (!entry) return;
      this.#calls.delete(call.requestId);
      entry.session.calls.delete(call.requestId);
      if (entry.timer) clearTimeout(entry.timer);
      entry.signal?.removeEventListener('abort', call);
    },
  };
  #nextRequestId = 1;
  #rotation = 0;
  #shuttingDown = false;

  constructor(directory: Directory, config: GatewayConfig['gate'], log: Logger) {
    this.#directory = directory;
    this.#config = config;
    this.#log = log.child({ component: 'gate' });
    this.billing = new BillingLedger(this.#log);
  }

  get defaultTimeoutSec(): number {
    return this.#config.defaultTimeoutSec;
  }

  /** Handles one `processAsync` stream from its first message to its end. */
  acceptServiceStream(stream: ServiceStream): void {
    let session: ServiceSession | undefined;
    let finished = false;
    const finish = (reason: string) => {
      if (finished) return;
      finished = true;
      if (session) this.#onSessionEnded(session, reason);
      else endQuietly(stream);
    };
    stream.on('data', (message: ServiceToGateProto) => {
      if (finished) return;
      if (session) {
        session.touch();
        this.#onServiceMessage(session, message);
        return;
      }
      session = this.#register(stream, message);
      if (!session) finish('registration refused');
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

    session.send({ serviceInfo: { accountId: service.accountId, modelId: service.id, modelName: service.name } });
    if (this.#config.servers.length > 1 && this.#config.currentServer) {
      session.send({ cluster: { servers: [...this.#config.servers], currentServer: this.#config.currentServer } });
    }
    session.startHeartbeats(this.#config.heartbeatIntervalMs, () => this.#onSessionEnded(session, 'heartbeat timeout'));
    session.log.info({ hostname: start.hostname, version: start.version, reconnect: Boolean(previous) }, 'service instance connected');
    return session;
  }

  /**
   * A reconnect of the same process (same instanceBootUuid): the new stream takes over routing and
   * the old one's in-flight calls, and the old stream stays readable so late answers still arrive.
   */
  #replace(previous: ServiceSession, next: ServiceSession): void {
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

  #onServiceMessage(session: ServiceSession, message: ServiceToGateProto): void {
    switch (message.body) {
      case 'heartBeat':
        return;
      case 'stopServing':
        session.state = 'draining';
        this.#unroute(session);
        session.log.info({ reason: message.stopServing?.reason }, 'service stopped serving; draining');
        return;
      case 'deferredBillingCharge':
      case 'deferredBillingCharges':
        this.billing.record(session.service, message);
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

  #deliver(session: ServiceSession, message: ServiceToGateProto): void {
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
      entry.call.fail(fromServiceError(message.error ?? {}, session.service.name));
    } else {
      entry.call.deliver(message);
    }
  }

  #onSessionEnded(session: ServiceSession, reason: string): void {
    if (session.state === 'closed') return;
    session.close();
    this.#unroute(session);
    const key = `${session.service.id}:${session.bootUuid}`;
    if (this.#byInstance.get(key) === session) this.#byInstance.delete(key);
    const lost = [...session.calls.values()];
    session.calls.clear();
    for (const call of lost) call.fail(gatewayError('SERVICE_DISCONNECTED', { args: { service: session.service.name } }));
    session.log.info({ reason, failedCalls: lost.length }, 'service instance disconnected');
  }

  /** The session that answers a call in flight (undefined once it settled). */
  #sessionOf(call: ServiceCall): ServiceSession | undefined {
    return this.#calls.get(call.requestId)?.session;
  }

  #routableOf(serviceId: number): ServiceSession[] {
    let list = this.#routable.get(serviceId);
    if (!list) this.#routable.set(serviceId, (list = []));
    return list;
  }

  #unroute(session: ServiceSession): void {
    const list = this.#routable.get(session.service.id);
    const index = list?.indexOf(session) ?? -1;
    if (list && index >= 0) list.splice(index, 1);
  }

  /** The least busy serving instance; ties go round-robin so idle instances share the load. */
  #pick(serviceId: number): ServiceSession | undefined {
    const list = this.#routable.get(serviceId);
    if (!list || list.length === 0) return undefined;
    const offset = this.#rotation++ % list.length;
    let best: ServiceSession | undefined;
    for (let i = 0; i < list.length; i++) {
      const candidate = list[(offset + i) % list.length]!;
      if (!best || candidate.inFlight < best.inFlight) best = candidate;
    }
    return best;
  }

  /** Whether a request for the service could be sent now (a derived service: its base's instances). */
  hasInstances(serviceId: number): boolean {
    const baseId = this.#directory.serviceById(serviceId)?.base?.serviceId ?? serviceId;
    return (this.#routable.get(baseId)?.length ?? 0) > 0;
  }

  instances(serviceId?: number): InstanceInfo[] {
    return [...this.#byInstance.values()]
      .filter((s) => serviceId === undefined || s.service.id === serviceId)
      .map((s) => ({ serviceId: s.service.id, bootUuid: s.bootUuid, state: s.state, inFlight: s.inFlight, hostname: s.start.hostname, connectedAt: s.connectedAt }));
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
    const { target, headers } = this.#route(service, options.headers);
    const session = this.#pick(target.id);
    if (!session) {
      const message = target === service ? undefined : `Service '${service.name}' is served by '${target.name}', which has no active instances`;
      throw gatewayError('NO_ACTIVE_INSTANCES', { args: { service: service.name }, message });
    }

    const requestId = this.#nextRequestId++;
    const timeoutMs = options.timeoutMs ?? (service.timeoutSec ?? this.#config.defaultTimeoutSec) * 1000;
    const signal = options.signal;

    // Answers come from the target's instances, and #deliver matches them by the target's ID.
    const call = new ServiceCall(requestId, target.id, this.#callHooks);
    const entry: CallEntry = { call, session, timer: undefined, signal };
    this.#calls.set(requestId, entry);
    session.calls.set(requestId, call);

    if (timeoutMs > 0 && Number.isFinite(timeoutMs)) entry.timer = setTimeout(expire, timeoutMs, call, service.name, timeoutMs);
    if (signal?.aborted) {
      call.fail(gatewayError('REQUEST_CANCELED'));
      return call;
    }
    signal?.addEventListener('abort', call, { once: true });

    if (!session.send({ requestId, headers, ...request })) {
      call.fail(gatewayError('SERVICE_DISCONNECTED', { args: { service: service.name } }));
    }
    return call;
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
    const deadline = Date.now() + this.#config.drainTimeoutMs;
    while (this.#calls.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const { call } of [...this.#calls.values()]) call.fail(gatewayError('GATE_IS_SHUT_DOWN'));
    for (const session of sessions) this.#onSessionEnded(session, 'gateway shutdown');
  }
}

/** A call in flight: the session that answers it (it moves on a reconnect), its deadline and abort signal. */
interface CallEntry {
  readonly call: ServiceCall;
  session: ServiceSession;
  timer: NodeJS.Timeout | undefined;
  readonly signal: AbortSignal | undefined;
}

/** The predict deadline of a call passed (a timer callback shared by every call). */
function expire(call: ServiceCall, serviceName: string, timeoutMs: number): void {
  call.fail(gatewayError('PREDICT_TIMEOUT', { args: { service: serviceName, timeoutSec: timeoutMs / 1000 } }), true);
}

function endQuietly(stream: ServiceStream): void {
  try {
    stream.end();
  } catch {
    // Already closed by the peer.
  }
}
