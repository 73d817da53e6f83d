import { REQUEST_ID_HEADER, type ServiceInfoProto, type StringMap } from '@model-gateway/protocol';
import type { LazyAbort } from './abort.js';
import type { SdkLogger } from './logger.js';
import { traceContextOf, type TraceContext } from './trace-context.js';

export interface RequestContextInit {
  requestId: number;
  headers: StringMap;
  abort: LazyAbort;
  gateway: string;
  serviceInfo: () => ServiceInfoProto | undefined;
  logger: SdkLogger;
}

/** What a handler knows about the request it serves, and how it sets answer headers. */
export class RequestContext {
  /** The gateway's requestId for this request; every answer carries it. */
  readonly requestId: number;
  /** Headers of the incoming request (`Z-requestId`, `PLATFORM-BILLING-KEY`, …). */
  readonly headers: Readonly<StringMap>;
  /** The gateway address the request came from. */
  readonly gateway: string;
  readonly logger: SdkLogger;
  /** Headers sent with the answer (on the envelope and on the response message). */
  readonly responseHeaders: StringMap = {};
  /** A status code for the answer (response messages carry an optional `statusCode`). */
  statusCode: number | undefined;
  /**
   * For streamed answers: send each frame as soon as it is yielded and close the stream with a
   * data-less `partialPredict{finish}`. By default the SDK looks one frame ahead to put `finish` on the
   * last frame with data (as the Python SDK does), which holds every frame back until the next one
   * exists: right for chat tokens, too late for live results such as speech recognition. May be set
   * inside a generator, before its first yield.
   */
  eagerFrames = false;
  readonly startedAt = performance.now();
  private readonly serviceInfoSource: () => ServiceInfoProto | undefined;
  readonly #abort: LazyAbort;
  #traceContext: TraceContext | null | undefined = undefined;

  constructor(init: RequestContextInit) {
    this.requestId = init.requestId;
    this.headers = init.headers;
    this.#abort = init.abort;
    this.gateway = init.gateway;
    this.logger = init.logger;
    this.serviceInfoSource = init.serviceInfo;
    const correlation = init.headers[REQUEST_ID_HEADER];
    if (correlation !== undefined) this.responseHeaders[REQUEST_ID_HEADER] = correlation;
  }

  /** The latest `serviceInfo` the gateway sent (account, model, bucket), if any. */
  get serviceInfo(): ServiceInfoProto | undefined {
    return this.serviceInfoSource();
  }

  /**
   * The W3C trace context the request came with (parsed on first read): with gateway tracing on, its
   * parent is the gateway's service-call span, so spans a handler starts under it join the trace.
   */
  get traceContext(): TraceContext | undefined {
    if (this.#traceContext === undefined) this.#traceContext = traceContextOf(this.headers) ?? null;
    return this.#traceContext ?? undefined;
  }

  /** Aborted when the gateway cancels this request or the stream it came on drops. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** Whether the request was cancelled (without making a signal). */
  get cancelled(): boolean {
    return this.#abort.aborted;
  }

  setHeader(name: string, value: string | number): this {
    this.responseHeaders[name] = String(value);
    return this;
  }

  /** Milliseconds since the request arrived, rounded. */
  elapsedMs(): number {
    return Math.round(performance.now() - this.startedAt);
  }
}

/** The context of a `fit` request: also reports progress to the gateway. */
export class FitContext extends RequestContext {
  constructor(
    init: RequestContextInit,
    private readonly report: (percentage: number) => void,
  ) {
    super(init);
  }

  /** Sends `fitStatus{percentage}` (clamped to 0..100, rounded) on the fit's stream. */
  progress(percentage: number): void {
    if (this.cancelled || !Number.isFinite(percentage)) return;
    this.report(Math.min(100, Math.max(0, Math.round(percentage))));
  }
}
