import type * as grpc from '@grpc/grpc-js';
import { PeerSilence, silenceLimitMs } from '@model-gateway/protocol';
import type { GateToServiceProto, HeartBeatProto, ServiceToGateProto, StringMap } from '@model-gateway/protocol';
import type { LazyAbort } from './abort.js';
import type { AsyncQueue } from './async-queue.js';
import { EndedStreams } from './ended-streams.js';
import type { PartialPredictChunk } from './handlers.js';
import type { SdkLogger } from './logger.js';

export type SessionEndReason = 'gate-ended' | 'error' | 'heartbeat-timeout' | 'cancelled';

export interface SessionEnd {
  reason: SessionEndReason;
  error?: Error;
}

/** A request being served on a session. */
export interface InflightRequest {
  controller: LazyAbort;
  /** The input of a streamed (partialPredict) request, until its `finish`. */
  input?: AsyncQueue<PartialPredictChunk>;
}

export class StreamClosedError extends Error {
  override readonly name = 'StreamClosedError';
}

/**
 * One `processAsync` stream: writes, heartbeats, the silence watchdog and the requests in flight on it.
 * Answers to a request go out on the session the request came in on, never on another one.
 */
export class StreamSession {
  readonly inflight = new Map<number, InflightRequest>();
  /** Streamed requests already answered whose later chunks are dropped (handler gone or refused). */
  readonly endedStreams = new EndedStreams();
  /** False once draining: new requests are refused. */
  accepting = true;
  /** True once anything arrived from the gateway. */
  receivedAny = false;
  readonly done: Promise<SessionEnd>;
  onMessage: (message: GateToServiceProto) => void = () => {};

  private writable = true;
  private ended: SessionEnd | undefined;
  private resolveDone!: (end: SessionEnd) => void;
  private heartbeatInterval: number | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  /** The gateway's silence, measured from its first heartBeat with an interval on. */
  private silence: PeerSilence | undefined;
  private warnedBadInterval = false;
  private idleWaiters: (() => void)[] = [];
  private drainWaiters: (() => void)[] = [];

  constructor(
    private readonly call: grpc.ClientDuplexStream<ServiceToGateProto, GateToServiceProto>,
    public gateway: string,
    private readonly log: SdkLogger,
    private readonly heartbeatGraceMs: number,
    /** Headers for each heartBeat (the handlers' load report). */
    private readonly heartbeatHeaders: () => StringMap | undefined = () => undefined,
  ) {
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
    call.on('data', (message: GateToServiceProto) => {
      this.receivedAny = true;
      this.silence?.heard();
      try {
        this.onMessage(message);
      } catch (err) {
        this.log.error({ gateway, err }, 'model-sdk: failed to handle a gateway message');
      }
    });
    call.on('error', (err: Error) => this.finish({ reason: 'error', error: err }));
    call.on('status', (status: grpc.StatusObject) => {
      if (status.code === 0) this.finish({ reason: 'gate-ended' });
      else this.finish({ reason: 'error', error: new Error(`stream ended with status ${status.code}: ${status.details}`) });
    });
    call.on('end', () => this.finish({ reason: 'gate-ended' }));
  }

  get isOpen(): boolean {
    return this.ended === undefined;
  }

  get canWrite(): boolean {
    return this.writable && this.ended === undefined;
  }

  /** Writes one message; false when the stream can no longer be written. */
  send(message: ServiceToGateProto): boolean {
    if (!this.canWrite) return false;
    try {
      this.call.write(message);
      return true;
    } catch (err) {
      this.log.warn({ gateway: this.gateway, err }, 'model-sdk: write to the gateway failed');
      return false;
    }
  }

  /** Writes one message and waits for the transport buffer to drain when it is full (streamed answers). */
  async sendAsync(message: ServiceToGateProto): Promise<boolean> {
    if (!this.canWrite) return false;
    let flushed: boolean;
    try {
      flushed = this.call.write(message);
    } catch (err) {
      this.log.warn({ gateway: this.gateway, err }, 'model-sdk: write to the gateway failed');
      return false;
    }
    if (!flushed) await this.waitDrain();
    return this.isOpen;
  }

  /** One 'drain' listener for all blocked writers; released on drain or when the stream ends. */
  private waitDrain(): Promise<void> {
    return new Promise((resolve) => {
      if (this.drainWaiters.push(resolve) === 1) this.call.once('drain', () => this.releaseDrainWaiters());
    });
  }

  private releaseDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const wake of waiters) wake();
  }

  /**
   * The gateway's heartBeat: the first one with interval > 0 starts ours (an empty HeartBeatProto every
   * interval ms) and the watchdog that closes the stream after 3 × interval + grace ms of silence.
   * The interval is read once; later heartbeats only count as traffic.
   */
  onGateHeartbeat(heartBeat: HeartBeatProto): void {
    if (this.heartbeatInterval !== undefined) return;
    const interval = heartBeat.interval ?? 0;
    if (!(interval > 0) || !Number.isFinite(interval)) {
      if (!this.warnedBadInterval) {
        this.warnedBadInterval = true;
        this.log.warn(
          { gateway: this.gateway, interval },
          'model-sdk: gateway heartBeat without a positive interval; not heartbeating yet',
        );
      }
      return;
    }
    if (interval < 10) this.log.warn({ gateway: this.gateway, interval }, 'model-sdk: very short heartbeat interval');
    this.heartbeatInterval = interval;
    const silence = (this.silence = new PeerSilence(interval));
    const silenceLimit = silenceLimitMs(interval, this.heartbeatGraceMs);
    // One timer sends ours and watches the gateway's: a check that a stall made late does not count
    // the stall as the gateway's silence (PeerSilence).
    this.heartbeatTimer = setInterval(() => {
      if (silence.check() > silenceLimit) {
        this.log.warn({ gateway: this.gateway, silenceLimit }, 'model-sdk: no message from the gateway in time; reconnecting');
        this.cancel('heartbeat-timeout');
        return;
      }
      const headers = this.heartbeatHeaders();
      this.send(headers ? { heartBeat: {}, headers } : { heartBeat: {} });
    }, interval);
    this.heartbeatTimer.unref();
  }

  get heartbeatIntervalMs(): number | undefined {
    return this.heartbeatInterval;
  }

  track(requestId: number, request: InflightRequest): void {
    this.inflight.set(requestId, request);
  }

  untrack(requestId: number, request: InflightRequest): void {
    if (this.inflight.get(requestId) !== request) return;
    this.inflight.delete(requestId);
    if (this.inflight.size === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }

  /** Resolves when nothing is in flight, the stream ends, or timeoutMs passes; true when idle. */
  async waitIdle(timeoutMs: number): Promise<boolean> {
    if (this.inflight.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<boolean>((resolve) => this.idleWaiters.push(() => resolve(true)));
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const ended = this.done.then(() => this.inflight.size === 0);
    try {
      return await Promise.race([idle, timeout, ended]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Graceful end: refuse new requests, wait for the in-flight ones (bounded), half-close, then give the
   * gateway halfCloseTimeoutMs to end its side before cancelling.
   */
  async drainAndClose(opts: { drainTimeoutMs: number; halfCloseTimeoutMs: number }): Promise<SessionEnd> {
    this.accepting = false;
    const idle = await this.waitIdle(opts.drainTimeoutMs);
    if (!idle)
      this.log.warn({ gateway: this.gateway, inflight: this.inflight.size }, 'model-sdk: drain timed out; closing with requests in flight');
    this.halfClose();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), opts.halfCloseTimeoutMs);
    });
    const result = await Promise.race([this.done, timedOut]);
    clearTimeout(timer);
    if (result === 'timeout') this.cancel('cancelled');
    return this.done;
  }

  /** Ends our side of the stream; the gateway still may send until it ends its side. */
  halfClose(): void {
    this.stopHeartbeats();
    if (!this.canWrite) return;
    this.writable = false;
    try {
      this.call.end();
    } catch {
      // already closed
    }
  }

  /** Closes the stream now: in-flight requests are aborted. */
  cancel(reason: SessionEndReason = 'cancelled'): void {
    this.finish({ reason });
    try {
      this.call.cancel();
    } catch {
      // already closed
    }
  }

  private stopHeartbeats(): void {
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
  }

  private finish(end: SessionEnd): void {
    if (this.ended) return;
    this.ended = end;
    this.writable = false;
    this.stopHeartbeats();
    const reason = new StreamClosedError(`The stream to ${this.gateway} closed (${end.reason})`);
    for (const request of this.inflight.values()) {
      request.controller.abort(reason);
      request.input?.fail(reason);
    }
    this.endedStreams.clear();
    this.releaseDrainWaiters();
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
    this.resolveDone(end);
  }
}
