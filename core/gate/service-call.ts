import { gatewayError, type GatewayError } from '../errors.js';
import { answerBytes, finalAnswer, isTerminal, type ServiceAnswer } from './answer.js';
import type { PartialPredictRequestProto } from '../../proto/src/index.js';

export { isTerminal, type ServiceAnswer };

/**
 * Deadlines of a streamed answer, in milliseconds; 0 turns one off. The call owns them (armed by the
 * Gate at `open`), so every relay of a stream gets the same rule and none re-arms timers of its own.
 */
export interface StreamDeadlines {
  /** From dispatch to the service's first answer frame (STREAM_FIRST_CHUNK_TIMEOUT). */
  readonly firstChunkMs: number;
  /** Between two answer frames once the stream runs (STREAM_IDLE_TIMEOUT). */
  readonly idleMs: number;
}

/** Who answers a call (the `x-served-by` header, and `model` when a fallback answered). */
export interface ServedBy {
  readonly name: string;
  readonly instance: string;
  readonly fallback: boolean;
}

/** The `x-served-by` header value: `<author>/<service>[/model]; instance=<instance>`. */
export function servedByHeader(served: ServedBy): string {
  return `${served.name}; instance=${served.instance}`;
}

/**
 * What a call asks of whoever routed it (the Gate): one object for every call, so that opening a
 * call allocates no closures.
 */
export interface ServiceCallHooks {
  /** Sends a further partialPredict for this request (processStream, recognition). */
  send(call: ServiceCall, message: PartialPredictRequestProto): void;
  /** Resolves when the stream the call rides on can take more messages without buffering. */
  whenWritable(call: ServiceCall): Promise<void>;
  /** Tells the service to stop working on this request (`cancel`); no answer is expected. */
  cancel(call: ServiceCall): void;
  /** Called once when the call settles, whatever the reason, to free its slot. */
  release(call: ServiceCall): void;
  /**
   * Bytes of answers a call holds for a reader that does not take them (gate.maxBufferedAnswerBytes).
   * The service cannot be paused without stalling every other request of its instance (they share
   * one processAsync stream), so a call over it fails with CALLER_TOO_SLOW and the service gets cancel.
   */
  readonly maxBufferedBytes: number;
  /** Largest answer a reader may gather into one response (gate.maxAnswerBytes; see answer.ts). */
  readonly maxAnswerBytes: number;
}

/**
 * Who watches a call's timing (the Gate sets one only when someone listens, or a request's record or
 * trace waits for it): each answer frame, and the end.
 */
export interface CallObserver {
  frame(): void;
  settled(call: ServiceCall): void;
}

/**
 * One request in flight to a model service. Answers are consumed as an async iterable; a service
 * `error`, a disconnect, a deadline or a caller's abort ends the iteration with a GatewayError.
 * Answers that arrive while nobody is reading are queued (a reader that stops reading must cancel).
 * The call is also the `abort` listener of the caller's signal (`handleEvent`).
 */
export class ServiceCall implements AsyncIterable<ServiceAnswer>, AsyncIterator<ServiceAnswer>, EventListenerObject {
  readonly requestId: number;
  /** The service whose instances answer (it changes when the Gate moves the call to a fallback). */
  serviceId: number;
  /** Who answers: `<author>/<service>[/model]`, the instance, and whether it is a fallback. */
  servedBy: ServedBy | undefined;
  /** The call's observer, when its timing is watched (call-observer.ts). */
  observer: CallObserver | undefined = undefined;
  readonly #hooks: ServiceCallHooks;
  #answered = false;
  readonly #queue: ServiceAnswer[] = [];
  /** Payload bytes in #queue (answerBytes of each). */
  #queuedBytes = 0;
  /** Created on first use: only relays that wait on something else (a 'drain') need it. */
  #ended$: AbortController | undefined;
  #failure: GatewayError | undefined;
  #ended = false;
  #settled = false;
  /** The stream deadlines, when the call has them, and the timer of the one now running. */
  #stream: { readonly deadlines: StreamDeadlines; readonly service: string; timer: NodeJS.Timeout | undefined } | undefined;
  /** The caller's signal, while the call listens to it. */
  #signal: AbortSignal | undefined = undefined;
  /** The reader waiting for the next answer, if any. */
  #waiting: { resolve: (result: IteratorResult<ServiceAnswer>) => void; reject: (error: GatewayError) => void } | undefined;

  constructor(requestId: number, serviceId: number, hooks: ServiceCallHooks) {
    this.requestId = requestId;
    this.serviceId = serviceId;
    this.#hooks = hooks;
  }

  /** Largest answer a reader may gather into one response (gate.maxAnswerBytes). */
  get maxAnswerBytes(): number {
    return this.#hooks.maxAnswerBytes;
  }

  get settled(): boolean {
    return this.#settled;
  }

  /**
   * Aborts when the call fails (service error, deadline, overflow, cancel): a relay waiting for its
   * caller to drain stops waiting, and finds the failure on its next read.
   */
  get failedSignal(): AbortSignal {
    this.#ended$ ??= new AbortController();
    if (this.#failure) this.#ended$.abort(this.#failure);
    return this.#ended$.signal;
  }

  /** The code of the error the call ended with; undefined while running or when it ended well. */
  get failureCode(): string | undefined {
    return this.#failure?.code;
  }

  /** Whether any answer frame arrived: from then on the call never moves to another service. */
  get answered(): boolean {
    return this.#answered;
  }

  /**
   * Arms the first-chunk deadline now and, once the first frame arrives, the idle deadline between
   * frames. Measured on frames from the service, not on a relay's reads: a caller that reads slowly is
   * bounded by CALLER_TOO_SLOW, not mistaken for a silent service.
   */
  setStreamDeadlines(deadlines: StreamDeadlines, serviceName: string): void {
    if (this.#settled || (deadlines.firstChunkMs <= 0 && deadlines.idleMs <= 0)) return;
    this.#stream = { deadlines, service: serviceName, timer: undefined };
    if (!this.#answered) this.#armStreamTimer('STREAM_FIRST_CHUNK_TIMEOUT', deadlines.firstChunkMs);
    else this.#armStreamTimer('STREAM_IDLE_TIMEOUT', deadlines.idleMs);
  }

  /**
   * The caller's signal aborting (caller gone, caller cancelled) fails the call and sends `cancel`:
   * the call is the signal's listener until it settles. An aborted signal fails it at once.
   */
  cancelOn(signal: AbortSignal): void {
    if (this.#settled) return;
    if (signal.aborted) return this.fail(gatewayError('REQUEST_CANCELED'));
    this.#signal = signal;
    signal.addEventListener('abort', this, { once: true });
  }

  /** Delivers a non-error answer frame from the service. */
  deliver(answer: ServiceAnswer): void {
    if (this.#settled) return;
    this.observer?.frame();
    if (this.#stream) this.#streamFrameArrived();
    this.#answered = true;
    const bytes = answerBytes(answer);
    if (bytes > this.#hooks.maxAnswerBytes) {
      // One frame past the largest answer the gateway holds: the service's fault, whoever reads.
      this.#dropQueue();
      this.fail(
        gatewayError('SERVICE_ANSWER_TOO_LARGE', {
          args: { service: this.servedBy?.name ?? `service ${this.serviceId}`, limit: this.#hooks.maxAnswerBytes },
        }),
        true,
      );
      return;
    }
    // The slow-reader bound counts what waits behind answers the reader has not taken: a frame that
    // finds the queue empty is the reader's next read, however large (a whole answer in one frame).
    if (this.#queue.length > 0 && this.#queuedBytes + bytes > this.#hooks.maxBufferedBytes) {
      // Nobody reads: holding more helps nobody, so the queue goes and the reader gets the error.
      this.#dropQueue();
      this.fail(gatewayError('CALLER_TOO_SLOW', { args: { limit: this.#hooks.maxBufferedBytes } }), true);
      return;
    }
    this.#queue.push(answer);
    this.#queuedBytes += bytes;
    if (isTerminal(answer)) this.#settle();
    this.#wakeReader();
  }

  /** Ends the call with an error; `notifyService` sends `cancel` first (deadline, caller gone). */
  fail(error: GatewayError, notifyService = false): void {
    if (this.#settled) return;
    if (notifyService) this.#hooks.cancel(this);
    this.#failure = error;
    this.#settle();
    this.#ended$?.abort(error);
    this.#wakeReader();
  }

  /** The caller's signal aborted (the call is registered as its `abort` listener). */
  handleEvent(): void {
    this.fail(gatewayError('REQUEST_CANCELED'), true);
  }

  /** Sends a further stream message to the service (for streamed requests). */
  send(message: PartialPredictRequestProto): void {
    if (!this.#settled) this.#hooks.send(this, message);
  }

  /** Resolves when further `send`s will not pile up in the gateway (see ServiceSession.whenWritable). */
  whenWritable(): Promise<void> {
    return this.#settled ? Promise.resolve() : this.#hooks.whenWritable(this);
  }

  /** Called by a reader that no longer wants answers: tells the service and frees the slot. */
  cancel(error: GatewayError): void {
    this.fail(error, true);
  }

  #dropQueue(): void {
    this.#queue.length = 0;
    this.#queuedBytes = 0;
  }

  #streamFrameArrived(): void {
    const stream = this.#stream!;
    if (!this.#answered) this.#armStreamTimer('STREAM_IDLE_TIMEOUT', stream.deadlines.idleMs);
    else stream.timer?.refresh();
  }

  #armStreamTimer(code: 'STREAM_FIRST_CHUNK_TIMEOUT' | 'STREAM_IDLE_TIMEOUT', ms: number): void {
    const stream = this.#stream!;
    clearTimeout(stream.timer);
    stream.timer = ms > 0 ? setTimeout(streamDeadlinePassed, Math.min(ms, MAX_TIMER_MS), this, code, stream.service, ms) : undefined;
  }

  #settle(): void {
    if (this.#stream) clearTimeout(this.#stream.timer);
    this.#settled = true;
    this.#ended = true;
    this.#hooks.release(this);
    this.#signal?.removeEventListener('abort', this);
    this.observer?.settled(this);
  }

  /** The next answer, the end, or the failure: what the iterator's next() settles with. */
  #next(): Promise<IteratorResult<ServiceAnswer>> {
    const next = this.#queue.shift();
    if (next) {
      this.#queuedBytes -= answerBytes(next);
      return Promise.resolve({ value: next, done: false });
    }
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.#waiting = { resolve, reject }));
  }

  #wakeReader(): void {
    const waiting = this.#waiting;
    if (!waiting) return;
    this.#waiting = undefined;
    this.#next().then(waiting.resolve, waiting.reject);
  }

  /**
   * Answers in order. The call is its own iterator: an async generator costs a promise per step
   * more, and an iterator object with a `next` arrow costs a closure per call (plus tsx's naming
   * of it, which showed in profiles).
   */
  [Symbol.asyncIterator](): AsyncIterator<ServiceAnswer> {
    return this;
  }

  /** The iterator's next(): the next answer, the end, or the failure. */
  next(): Promise<IteratorResult<ServiceAnswer>> {
    return this.#next();
  }

  /**
   * The terminal answer, for callers that want one message (a streamed answer yields its last frame),
   * read by the one answer reader (answer.ts `finalAnswer`): statuses, JSON/protobuf mixing, the size
   * bound and the header allow-list are checked as for an HTTP answer.
   */
  final(serviceName = this.servedBy?.name ?? `service ${this.serviceId}`): Promise<ServiceAnswer> {
    return finalAnswer(this, serviceName);
  }
}

/** The longest delay a Node timer holds (2^31 - 1 ms); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A stream deadline passed (a timer callback shared by every call): the service gets `cancel`. */
function streamDeadlinePassed(
  call: ServiceCall,
  code: 'STREAM_FIRST_CHUNK_TIMEOUT' | 'STREAM_IDLE_TIMEOUT',
  service: string,
  ms: number,
): void {
  call.fail(gatewayError(code, { args: { service, timeoutSec: ms / 1000 } }), true);
}
