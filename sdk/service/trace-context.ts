/**
 * The W3C Trace Context (https://www.w3.org/TR/trace-context/) of a request, read from the headers
 * the gateway sends. With tracing on, the gateway's service-call span is the parent; otherwise it is
 * the caller's own traceparent, passed on. A tiny parser rather than an OpenTelemetry dependency: the
 * SDK depends on nothing but the protocol, and a service that uses OpenTelemetry hands `traceparent`
 * to its propagator (or builds a remote span context from these fields).
 */
export interface TraceContext {
  /** The header as received: `00-<traceId>-<parentId>-<flags>`. */
  readonly traceparent: string;
  /** 32 lowercase hex digits. */
  readonly traceId: string;
  /** The span ID (16 hex digits) of the parent: the span a service's own spans should be children of. */
  readonly parentId: string;
  /** Whether the caller recorded the trace (the `sampled` flag). */
  readonly sampled: boolean;
  /** Vendor data (`tracestate`), when it came. */
  readonly tracestate?: string;
}

/** Version 00; all-zero trace and parent IDs are invalid. */
const TRACEPARENT = /^00-(?!0{32})([0-9a-f]{32})-(?!0{16})([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The trace context in `headers`; undefined when none came or its traceparent is malformed. */
export function traceContextOf(headers: Readonly<Record<string, string>>): TraceContext | undefined {
  const traceparent = headers.traceparent;
  const match = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  if (!match) return undefined;
  const tracestate = headers.tracestate;
  return {
    traceparent: traceparent!,
    traceId: match[1]!,
    parentId: match[2]!,
    sampled: (parseInt(match[3]!, 16) & 1) === 1,
    ...(tracestate ? { tracestate } : {}),
  };
}
