import type { StringMap } from '../../proto/src/index.js';

/** W3C Trace Context (https://www.w3.org/TR/trace-context/): version 00, trace ID, parent ID, flags. */
const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;
/** tracestate: at most 32 list members; bounded in length so a caller cannot make it large. */
const TRACESTATE_MAX = 512;

/**
 * Copies a caller's W3C `traceparent` (and `tracestate`) into the headers a service receives, so a
 * service's own spans join the caller's trace. Only a well-formed traceparent is passed; anything
 * else is dropped, as the W3C rules say.
 */
export function passTraceContext(get: (name: string) => string, headers: StringMap): void {
  const traceparent = get('traceparent');
  if (!TRACEPARENT.test(traceparent)) return;
  headers.traceparent = traceparent;
  const tracestate = get('tracestate');
  if (tracestate && tracestate.length <= TRACESTATE_MAX) headers.tracestate = tracestate;
}

/** The parts of a valid traceparent; undefined for anything else. */
export function parseTraceparent(value: string): { traceId: string; parentId: string; flags: number } | undefined {
  if (!TRACEPARENT.test(value)) return undefined;
  return { traceId: value.slice(3, 35), parentId: value.slice(36, 52), flags: parseInt(value.slice(53, 55), 16) };
}
