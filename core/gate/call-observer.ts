import type { ServiceEntry } from '../admission/directory.js';
import type { GatewayEvents } from '../observe/events.js';
import type { RequestRecord } from '../observe/request-record.js';
import type { ServiceCallSpan } from '../observe/request-trace.js';
import type { StringMap } from '../../proto/src/index.js';
import type { CallContext } from './call-context.js';
import type { CallObserver, ServiceCall } from './service-call.js';
import { serviceLabel } from './service-label.js';

/**
 * The timing of one call, kept only when someone needs it (a `serviceCall` or `chunkGap` listener,
 * or a request record or trace waiting for it): time to the first frame, gaps between frames, and
 * the whole wait, which counts to the request's record and ends the call's span.
 */
class CallTiming implements CallObserver {
  readonly #events: GatewayEvents;
  readonly #label: string;
  readonly #record: RequestRecord | undefined;
  readonly #span: ServiceCallSpan | undefined;
  readonly #openedAt = performance.now();
  #firstChunkAt = 0;
  #lastChunkAt = 0;
  #chunks = 0;

  constructor(events: GatewayEvents, label: string, record: RequestRecord | undefined, span: ServiceCallSpan | undefined) {
    this.#events = events;
    this.#label = label;
    this.#record = record;
    this.#span = span;
  }

  frame(): void {
    const now = performance.now();
    if (this.#chunks++ === 0) {
      this.#firstChunkAt = now;
      this.#span?.firstByte();
    } else if (this.#events.has('chunkGap')) {
      this.#events.emit('chunkGap', { service: this.#label, ms: now - this.#lastChunkAt });
    }
    this.#lastChunkAt = now;
  }

  settled(call: ServiceCall): void {
    const durationMs = performance.now() - this.#openedAt;
    if (this.#record) this.#record.serviceWaitMs += durationMs;
    this.#span?.end(call.failureCode ?? 'ok', this.#chunks);
    if (this.#events.has('serviceCall')) {
      this.#events.emit('serviceCall', {
        service: this.#label,
        outcome: call.failureCode ?? 'ok',
        durationMs,
        firstChunkMs: this.#chunks > 0 ? this.#firstChunkAt - this.#openedAt : undefined,
        chunks: this.#chunks,
      });
    }
  }
}

/**
 * Watches `call` when anyone needs its timing, and returns the headers to send: `headers` as they
 * are, or, for a traced request, a copy that carries the call span's `traceparent` (the service's
 * spans become children of this call's span). The caller's headers are never written.
 */
export function observeCall(
  events: GatewayEvents,
  call: ServiceCall,
  service: ServiceEntry,
  model: string | undefined,
  context: CallContext | undefined,
  headers: StringMap,
): StringMap {
  const record = context?.record;
  if (record) record.service = service;
  if (record === undefined && context?.span === undefined && !events.has('serviceCall') && !events.has('chunkGap')) return headers;
  const label = serviceLabel(service);
  const span = context?.span?.serviceCall(label, model ?? service.defaultModel);
  call.observer = new CallTiming(events, label, record, span);
  return span ? { ...headers, traceparent: span.traceparent } : headers;
}
