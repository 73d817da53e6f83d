/**
 * The tracing seam of the core: what the HTTP app, the pipeline and the Gate tell a request's trace.
 * It names no OpenTelemetry type, so the core pays nothing for tracing when it is off: then no
 * `RequestTrace` exists and each seam is one `undefined` check. core/observe/tracing.ts implements it.
 */

/** The stages of a request before its service call; each is a child span of the request's span. */
export type TraceStage = 'admission' | 'validation' | 'dispatch';

/** The span of one request to a model service, from sending it to its last answer frame. */
export interface ServiceCallSpan {
  /** The W3C traceparent to send to the service: this span is the parent of the service's spans. */
  readonly traceparent: string;
  firstByte(): void;
  end(outcome: string, chunks: number): void;
}

/** The trace of one request (HTTP, or a gRPC client call). */
export interface RequestTrace {
  /** Ends the stage in progress (if another) and starts `stage`; entering the current stage again is a no-op. */
  enter(stage: TraceStage): void;
  serviceCall(service: string, model: string | undefined): ServiceCallSpan;
}

/** What the pipeline calls at each stage, for whichever request is being served (tracing finds it). */
export interface StageObserver {
  enter(stage: TraceStage): void;
}

/** The trace of one gRPC client call: a request trace the client calls end themselves. */
export interface CallTrace extends RequestTrace {
  /** Ends the call's span: `code` is the in-band error code ('OK' when none), `status` its HTTP status. */
  finish(code: string, status: number, attributes: { service?: string; inputTokens?: number; outputTokens?: number }): void;
}

/** Starts the trace of a gRPC client call, parented on the caller's `traceparent` metadata when valid. */
export interface CallTracer {
  start(method: string, traceparent: string | undefined): CallTrace;
}
