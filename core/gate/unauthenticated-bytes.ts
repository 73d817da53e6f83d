import http2, { type Http2Stream } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { gatewayError } from '../errors.js';

/**
 * A gateway-wide budget of bytes held for gRPC input nobody has vouched for yet: client-call
 * messages before their caller is admitted, and `processAsync` messages before `startServing` is
 * accepted. Per-call limits (receive-limits.ts) bound one message, not how many peers send one at
 * once: 1,000 unauthenticated peers each sending a 4 MiB client message made the gateway hold 4 GB
 * before it could look at a single key. With the budget, a message whose bytes would take the total
 * past it is refused (RESOURCE_EXHAUSTED, UNAUTHENTICATED_BYTES_EXHAUSTED) and its stream reset, so
 * its bytes are dropped; admitted callers are not counted and keep being served.
 *
 * The bytes counted are those of messages still arriving (grpc-js buffers a message until it is
 * complete): the tracker reads each message's 5-byte length prefix itself, so it needs nothing of
 * grpc-js beyond the HTTP/2 stream's `data` events.
 */
export class UnauthenticatedBytes {
  #inFlight = 0;
  readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Bytes of unauthenticated messages being received now, over all calls. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Takes `bytes` from the budget; false (and nothing taken) when they do not fit. */
  take(bytes: number): boolean {
    if (this.#inFlight + bytes > this.limit) return false;
    this.#inFlight += bytes;
    return true;
  }

  give(bytes: number): void {
    this.#inFlight = Math.max(0, this.#inFlight - bytes);
  }
}

/**
 * Bytes of each message that do not count: a small message (every key check a gRPC client makes)
 * always gets through, so peers that fill the budget with large messages cannot lock out callers
 * that send small ones. Each such message costs at most this much, as each HTTP/2 stream costs its
 * flow-control window anyway.
 */
export const FREE_BYTES_PER_MESSAGE = 16 * 1024;

/** Where a message stands in the gRPC framing (1 flag byte, 4 length bytes, the message). */
interface Framing {
  /** Bytes of the current message seen, prefix included. */
  seen: number;
  /** Its full size, prefix included, once the prefix is read. */
  size: number | undefined;
  prefix: number[];
}

/**
 * One call's share of the budget: the counted bytes of the message it is receiving now. Reads the
 * framing itself to know where each message ends; a completed message gives its bytes back, as it
 * leaves the receive buffer for the handler (whose admission decides whether more may come).
 */
export class CallBytes {
  readonly #budget: UnauthenticatedBytes;
  #framing: Framing = { seen: 0, size: undefined, prefix: [] };
  #held = 0;
  /** Messages completed so far. */
  messages = 0;

  constructor(budget: UnauthenticatedBytes) {
    this.#budget = budget;
  }

  /** Counts a chunk of the call's stream; false when it does not fit the budget (nothing of it is then counted). */
  receive(chunk: Buffer): boolean {
    const next = structuredClone(this.#framing);
    // Counted bytes of each message the chunk touches: all but the last are completed by it.
    const counted: number[] = [0];
    for (let at = 0; at < chunk.length;) {
      let step: number;
      if (next.size === undefined) {
        next.prefix.push(chunk[at]!);
        step = 1;
        if (next.prefix.length === 5) next.size = 5 + Buffer.from(next.prefix).readUInt32BE(1);
      } else {
        step = Math.min(next.size - next.seen, chunk.length - at);
      }
      counted[counted.length - 1]! += Math.max(0, next.seen + step - FREE_BYTES_PER_MESSAGE) - Math.max(0, next.seen - FREE_BYTES_PER_MESSAGE);
      next.seen += step;
      at += step;
      if (next.seen === next.size) {
        Object.assign(next, { seen: 0, size: undefined, prefix: [] });
        counted.push(0);
      }
    }
    const completed = counted.length - 1;
    const stillArriving = counted[completed]!;
    // Completed messages leave the buffer at once: only the one still arriving must fit.
    if (!this.#budget.take(stillArriving)) return false;
    if (completed > 0) {
      this.#budget.give(this.#held);
      this.#held = 0;
    }
    this.#held += stillArriving;
    this.#framing = next;
    this.messages += completed;
    return true;
  }

  /** Gives back what the call still holds (its stream closed, or it became trusted). */
  release(): void {
    this.#budget.give(this.#held);
    this.#held = 0;
  }
}

interface GrpcJsCallInternals {
  stream?: Http2Stream;
  sendStatus(status: { code: grpc.status; details: string; metadata?: grpc.Metadata }): void;
}

/** Ends the watch of a call: it gives its bytes back and is no longer counted. */
const untrusted = new WeakMap<object, () => void>();

/**
 * The interceptor: watches the calls of the paths `watched` names. A client call is watched until its
 * first message is complete (its admission comes next, and refuses or vouches for all that follows);
 * a `processAsync` stream until `trust(stream)` (its `startServing` accepted). A chunk over the
 * budget answers RESOURCE_EXHAUSTED with the coded error and resets the stream, dropping what
 * grpc-js had buffered of it.
 */
export function unauthenticatedBytesInterceptor(budget: UnauthenticatedBytes, watched: (path: string) => 'firstMessage' | 'untilTrusted' | undefined): grpc.ServerInterceptor {
  return (method, call) => {
    const mode = watched(method.path);
    const internals = call as unknown as GrpcJsCallInternals;
    const stream = internals.stream;
    if (mode && stream) {
      const bytes = new CallBytes(budget);
      const stop = () => {
        stream.off('data', onData);
        bytes.release();
        untrusted.delete(call);
      };
      const onData = (chunk: Buffer) => {
        if (!bytes.receive(chunk)) {
          stop();
          const err = gatewayError('UNAUTHENTICATED_BYTES_EXHAUSTED', { args: { limit: budget.limit } });
          internals.sendStatus({ code: grpc.status.RESOURCE_EXHAUSTED, details: `${err.code}: ${err.message}` });
          stream.close(http2.constants.NGHTTP2_CANCEL);
          return;
        }
        if (mode === 'firstMessage' && bytes.messages > 0) stop();
      };
      stream.on('data', onData);
      stream.once('close', stop);
      untrusted.set(call, stop);
    }
    // grpc-js types an interceptor's result as its class; the base call it passes is used as is.
    return call as grpc.ServerInterceptingCall;
  };
}

/** A `processAsync` stream has registered: its bytes no longer count (the handler's stream object). */
export function trust(stream: object): void {
  const call = (stream as { call?: object }).call;
  if (call) untrusted.get(call)?.();
}
