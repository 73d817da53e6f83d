import type { Caller, ServiceEntry } from '../admission/directory.js';
import type { RequestTrace } from './request-trace.js';

/**
 * What the gateway learns about one HTTP request while it is served: who called, which service,
 * how long the services took, how many tokens the answer used. The HTTP app creates it, the helpers
 * and the Gate fill it in, and the access log and the `httpRequest` event read it at the end.
 */
export class RequestRecord {
  caller: Caller | undefined = undefined;
  service: ServiceEntry | undefined = undefined;
  /** Sum of the time from sending each service request to its last answer. */
  serviceWaitMs = 0;
  bytesIn = 0;
  /** The model the caller asked for, when an adapter reported the answer's tokens. */
  model: string | undefined = undefined;
  inputTokens: number | undefined = undefined;
  outputTokens: number | undefined = undefined;
  /** The request's trace; undefined when tracing is off. */
  trace: RequestTrace | undefined = undefined;
}

/**
 * The record of the request whose service headers these are: the Gate receives the headers object
 * that `http.serviceHeaders()` built, not the Koa context, so the two are linked by the object's
 * identity (a WeakMap: nothing is kept once the request is gone).
 */
const recordOfHeaders = new WeakMap<object, RequestRecord>();

export function linkHeadersToRecord(headers: object, record: RequestRecord): void {
  recordOfHeaders.set(headers, record);
}

export function recordOfServiceHeaders(headers: object | undefined): RequestRecord | undefined {
  return headers === undefined ? undefined : recordOfHeaders.get(headers);
}
