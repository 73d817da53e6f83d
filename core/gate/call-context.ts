import type { Caller, ServiceEntry } from '../admission/directory.js';
import type { RequestRecord } from '../observe/request-record.js';
import type { RequestTrace } from '../observe/request-trace.js';
import type { StringMap } from '../../proto/src/index.js';

/**
 * What the Gate learns about a call from where it was admitted (an HTTP route through
 * `http.callContext`, a gRPC client call): made once per request and passed to `gate.open` as
 * `context`, so that nothing is found through the identity of an object (a plugin that copies or
 * extends `headers` keeps the request's record and trace).
 */
export interface CallContext {
  /** Who calls: the account and the key, as admission found them. */
  readonly caller: Caller;
  /** The name of the API key the call came with (`caller.keyName`). */
  readonly key: string;
  /** The service the caller addressed, when admission resolved one. */
  readonly service: ServiceEntry | undefined;
  /** Headers for the service (Z-requestId, caller and billing headers, the caller's trace context). */
  readonly headers: StringMap;
  /** Aborts when the caller goes away, when the place that admitted the call has one (gRPC). */
  readonly signal: AbortSignal | undefined;
  /** The request's record (access log, `httpRequest`, `grpcCall`): the Gate adds the service and its wait. */
  readonly record: RequestRecord | undefined;
  /** The request's span, when it is traced: each service call becomes a child span of it. */
  readonly span: RequestTrace | undefined;
}

/** A CallContext from what admission found; the record's caller is set here, once. */
export function callContext(
  caller: Caller,
  headers: StringMap,
  record: RequestRecord | undefined,
  service?: ServiceEntry,
  signal?: AbortSignal,
): CallContext {
  if (record) record.caller = caller;
  return { caller, key: caller.keyName, service, headers, signal, record, span: record?.trace };
}
