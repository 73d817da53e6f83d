import * as grpc from '@grpc/grpc-js';
import { GateHeaders } from '@model-gateway/protocol';
import type { ClusterUpdateProto, GateToServiceProto, HeartBeatProto, ServiceInfoProto, StartServingProto } from '@model-gateway/protocol';
import { createGateStub, type GateStub } from '../grpc.js';
import { Backoff } from './backoff.js';
import { openBulkLane } from './bulk-lane.js';
import type { Dispatcher } from './dispatcher.js';
import { ServiceErrorCodes } from './errors.js';
import type { ResolvedOptions } from './options.js';
import { StreamSession, type SessionEnd } from './session.js';

/** A failure that ends one gateway connection for good (e.g. an unknown connection token). */
export class GateConnectionError extends Error {
  override readonly name = 'GateConnectionError';

  constructor(
    readonly code: string,
    message: string,
    readonly gateway: string,
  ) {
    super(message);
  }
}

/** What a connection needs from the service that owns it. */
export interface ConnectionHost {
  readonly options: ResolvedOptions;
  readonly dispatcher: Dispatcher;
  startServing(): StartServingProto;
  onGateMessage(connection: GateConnection): void;
  onSessionOpen(connection: GateConnection): void;
  onSessionClosed(connection: GateConnection, end: SessionEnd): void;
  onCluster(connection: GateConnection, update: ClusterUpdateProto): void;
  onServiceInfo(info: ServiceInfoProto): void;
  onFatal(connection: GateConnection, error: GateConnectionError): void;
}

/**
 * The service's link to one gateway: healthCheck, then a processAsync stream that opens with
 * startServing; reconnects with exponential backoff whenever the stream ends, errors, falls silent or
 * the gateway sends stopServing (after draining); stops for good on close() or a fatal gateway error.
 */
export class GateConnection {
  /** The gateway's address as the cluster knows it (a cluster update may rename it); dialAddress stays. */
  name: string;
  private session: StreamSession | undefined;
  /** The session's bulk lane, when the gateway offered one (bulk-lane.ts). */
  private lane: StreamSession | undefined;
  private stub: GateStub | undefined;
  private pendingHealth: grpc.ClientUnaryCall | undefined;
  private closed = false;
  private fatal = false;
  private wake: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private readonly backoff: Backoff;

  constructor(
    private readonly host: ConnectionHost,
    readonly dialAddress: string,
  ) {
    this.name = dialAddress;
    this.backoff = new Backoff(host.options.backoff);
  }

  private get log() {
    return this.host.options.logger;
  }

  /** A stream is open and takes requests. */
  get serving(): boolean {
    return this.session !== undefined && this.session.canWrite && this.session.accepting;
  }

  get currentSession(): StreamSession | undefined {
    return this.session;
  }

  get failed(): boolean {
    return this.fatal;
  }

  rename(name: string): void {
    this.name = name;
    if (this.session) this.session.gateway = name;
  }

  start(): void {
    this.loopDone ??= this.loop();
  }

  /**
   * Graceful close: send stopServing, refuse new requests, wait for in-flight ones (bounded by
   * drainTimeoutMs), half-close, and do not reconnect.
   */
  close(reason = 'service stop'): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      this.wake?.();
      this.pendingHealth?.cancel();
      const session = this.session;
      if (session?.isOpen) await this.drain(session, reason);
      await this.loopDone;
      this.closeStub();
    })();
    return this.closing;
  }

  private async loop(): Promise<void> {
    while (!this.closed && !this.fatal) {
      let healthy = false;
      let failure: Error | undefined;
      try {
        healthy = await this.connectOnce();
      } catch (err) {
        failure = err as Error;
      }
      this.closeStub();
      if (this.closed || this.fatal) break;
      if (healthy) this.backoff.reset();
      const delay = this.backoff.next();
      // One short line per failed attempt, with the wait before the next one.
      if (failure)
        this.log.warn(
          { gateway: this.name, err: shortReason(failure), retryInMs: delay },
          `model-sdk: cannot reach gateway ${this.name}: ${shortReason(failure)}; retrying in ${(delay / 1000).toFixed(1)} s`,
        );
      else this.log.debug({ gateway: this.name, delay }, 'model-sdk: reconnecting');
      await this.sleep(delay);
    }
  }

  /** One attempt: healthCheck, stream, serve until the stream ends. True when the gateway spoke on it. */
  private async connectOnce(): Promise<boolean> {
    const { options } = this.host;
    const stub = createGateStub(this.dialAddress, options.credentials, {
      // A fresh TCP connection per attempt: after heartbeat silence the old one may be dead.
      'grpc.use_local_subchannel_pool': 1,
      ...options.channelOptions,
    });
    this.stub = stub;
    const reply = await this.healthCheck(stub, options.healthCheckTimeoutMs);
    if (reply.status !== 'Ok') throw new Error(`healthCheck answered status '${reply.status ?? ''}', not 'Ok'`);
    if (this.closed) return false;

    const dispatcher = this.host.dispatcher;
    const session = new StreamSession(stub.processAsync(new grpc.Metadata()), this.name, this.log, options.heartbeatGraceMs, () =>
      dispatcher.loadHeaders(),
    );
    session.onMessage = (message) => this.onMessage(session, message);
    this.session = session;
    // startServing is always the first message of every stream, reconnects included.
    session.send({ startServing: this.host.startServing() });
    this.log.debug({ gateway: this.name }, 'model-sdk: stream open, startServing sent');
    this.host.onSessionOpen(this);
    const end = await session.done;
    this.session = undefined;
    this.lane?.cancel();
    this.lane = undefined;
    // After a refused token there is no reconnect to announce: onGateError said why.
    if (session.receivedAny && !this.closed && !this.fatal)
      this.log.info(
        { gateway: this.name, reason: end.reason, err: end.error?.message },
        `model-sdk: disconnected from gateway ${this.name} (${end.error?.message ?? end.reason}); reconnecting`,
      );
    else this.log.debug({ gateway: this.name, reason: end.reason, err: end.error?.message }, 'model-sdk: stream closed');
    this.host.onSessionClosed(this, end);
    return session.receivedAny;
  }

  private healthCheck(stub: GateStub, timeoutMs: number): Promise<HeartBeatProto> {
    return new Promise((resolve, reject) => {
      this.pendingHealth = stub.healthCheck({}, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, response) => {
        this.pendingHealth = undefined;
        if (err) reject(err);
        else resolve(response ?? {});
      });
    });
  }

  private onMessage(session: StreamSession, message: GateToServiceProto): void {
    switch (message.body) {
      case 'heartBeat':
        session.onGateHeartbeat(message.heartBeat ?? {});
        break;
      case 'cluster':
        this.host.onCluster(this, message.cluster ?? {});
        break;
      case 'serviceInfo':
        this.log.info(
          { gateway: this.name, service: message.serviceInfo?.modelName, accountId: message.serviceInfo?.accountId },
          `model-sdk: connected to gateway ${this.name} as service '${message.serviceInfo?.modelName ?? '?'}' (account ${message.serviceInfo?.accountId ?? '?'})`,
        );
        this.host.onServiceInfo(message.serviceInfo ?? {});
        this.openLaneIfOffered(session, message);
        break;
      case 'stopServing':
        this.log.info(
          { gateway: this.name, reason: message.stopServing?.reason },
          'model-sdk: gateway sent stopServing; draining, then reconnecting',
        );
        void this.drain(session);
        break;
      case 'cancel':
        // A request on the lane may be cancelled on the main stream (the gateway had let it go).
        this.host.dispatcher.cancel(session, message.cancel?.requestIdToCancel ?? 0);
        if (this.lane) this.host.dispatcher.cancel(this.lane, message.cancel?.requestIdToCancel ?? 0);
        break;
      case 'error':
        this.onGateError(session, message);
        return;
      default:
        this.host.dispatcher.dispatch(session, message);
    }
    this.host.onGateMessage(this);
  }

  /** Opens the bulk lane the gateway offers on its serviceInfo, once per session, unless the service opted out. */
  private openLaneIfOffered(session: StreamSession, message: GateToServiceProto): void {
    const { options, dispatcher } = this.host;
    if (!options.bulkLane || this.lane || !this.stub || this.session !== session) return;
    if (!Number(message.headers?.[GateHeaders.bulkLaneBytes] ?? 0)) return;
    this.lane = openBulkLane(this.stub, session, this.host.startServing(), dispatcher, this.log, options.heartbeatGraceMs);
  }

  /**
   * Stops taking requests and ends the session and its lane once the requests of both are answered
   * (bounded by drainTimeoutMs). Either stream's end ends a serving instance at the gateway (a
   * draining one ends with the last), so neither is closed while the other still has requests.
   */
  private async drain(session: StreamSession, stopServing?: string): Promise<void> {
    const { drainTimeoutMs, halfCloseTimeoutMs } = this.host.options;
    const streams = this.lane ? [session, this.lane] : [session];
    for (const stream of streams) stream.accepting = false;
    if (stopServing !== undefined) session.send({ stopServing: { reason: stopServing } });
    await Promise.all(streams.map((stream) => stream.waitIdle(drainTimeoutMs)));
    // All are idle now (or out of time): none waits again before it half-closes.
    await Promise.all(streams.map((stream) => stream.drainAndClose({ drainTimeoutMs: 0, halfCloseTimeoutMs })));
  }

  private onGateError(session: StreamSession, message: GateToServiceProto): void {
    const error = message.error ?? {};
    if (error.code === ServiceErrorCodes.instanceByTokenNotFound) {
      this.fatal = true;
      const failure = new GateConnectionError(
        error.code,
        `Gateway ${this.name} does not know this service's connection token: ${error.message ?? ''}`.trim(),
        this.name,
      );
      this.log.error(
        { gateway: this.name, code: error.code },
        `model-sdk: gateway ${this.name} refused this service's connection token (${error.message ?? error.code}); check PLATFORM_SERVICE_TOKEN. Not reconnecting to it`,
      );
      session.cancel('cancelled');
      this.host.onFatal(this, failure);
      return;
    }
    const requestId = message.requestId ?? 0;
    this.log.warn({ gateway: this.name, requestId, code: error.code, message: error.message }, 'model-sdk: error from the gateway');
    if (requestId !== 0) this.host.dispatcher.cancel(session, requestId);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  private closeStub(): void {
    this.stub?.close();
    this.stub = undefined;
  }
}

/** The first line of an error, without grpc-js's "14 UNAVAILABLE: " and resolver detail. */
function shortReason(err: Error): string {
  const first = (err.message ?? String(err)).split('\n')[0]!;
  return first
    .replace(/^\d+ [A-Z_]+: /, '')
    .replace(/^No connection established\. Last error: /, '')
    .replace(/^Error: /, '')
    .replace(/\.? ?Resolution note: ?.*$/, '')
    .slice(0, 160);
}
