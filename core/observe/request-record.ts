import type { Caller, ServiceEntry } from '../admission/directory.js';
import type { RequestTrace } from './request-trace.js';

/**
 * What the gateway learns about one HTTP request while it is served: who called, which service,
 * how long the services took, how many tokens the answer used. The HTTP app creates it, the helpers
 * and the Gate fill it in (the Gate finds it in the call's CallContext, core/gate/call-context.ts), and
 * the access log and the `httpRequest` event read it at the end.
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
