import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { GatewayError, gatewayError } from '../errors.js';
import { EarlyKeyCheck, type AdmittedKey } from './client-message.js';
import { ExtParamsScan } from './ext-params-scan.js';
import { toApiErrorProto } from './api-error.js';
import { beforeStatus, callInternals, callOfStream } from './grpc-call-internals.js';
import { ByteRate, StreamPacer, type AccountInputRate } from '../flow/byte-rate.js';
import { holdUntilFirstMessage, type UnidentifiedCalls } from './unidentified-calls.js';

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
 *
 * The budget bounds memory, not work: one unauthenticated peer looping the largest message the
 * limits allow made the gateway receive 200 MiB/s over loopback, and the chat adapter's p99 grew
 * sixfold (npm run bench -- --only hostile). So those bytes are also read at a bounded rate,
 * `server.unauthenticatedBytesPerSecond` over all peers: past it the streams that carry them are
 * paused, and HTTP/2 flow control makes their senders wait.
 */
export class UnauthenticatedBytes {
  #inFlight = 0;
  readonly limit: number;
  /** Unauthenticated bytes read per second, over all peers; the rest waits in HTTP/2 flow control. */
  readonly ratePerSecond: number;
  readonly #rate: ByteRate;

  constructor(limit: number, ratePerSecond = Infinity) {
    this.limit = limit;
    this.ratePerSecond = ratePerSecond;
    this.#rate = new ByteRate(ratePerSecond);
  }

  /** Charges `bytes` just read to the rate and says how long the reader should pause (core/flow/byte-rate.ts). */
  throttle(bytes: number): number {
    return this.#rate.charge(bytes);
  }

  /**
   * How long `bytes` take at the gateway-wide rate, without charging them: the wait before a refused
   * keyless message is answered, as long as its rest would have taken to read. Charged to the shared
   * rate instead, bytes never sent would let one peer announcing large messages on many streams hold
   * every other unauthenticated reader (a service registering with a large descriptor) for minutes.
   */
  readingTimeMs(bytes: number): number {
    return this.#rate.timeMs(bytes);
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
  /** The counted bytes (past each message's free bytes) of the last chunk received. */
  lastCounted = 0;

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
      counted[counted.length - 1]! +=
        Math.max(0, next.seen + step - FREE_BYTES_PER_MESSAGE) - Math.max(0, next.seen - FREE_BYTES_PER_MESSAGE);
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
    this.lastCounted = counted.reduce((sum, n) => sum + n, 0);
    return true;
  }

  /** Gives back what the call still holds (its stream closed, or it became trusted). */
  release(): void {
    this.#budget.give(this.#held);
    this.#held = 0;
  }
}

/** Ends the watch of a call: it gives its bytes back and is no longer counted. */
const untrusted = new WeakMap<object, () => void>();

/** What the interceptor checks beyond the budget: the key at the head of a large first message, its account's rate, its ext params. */
export interface EarlyChecks {
  checkClientKey?: (token: string | undefined) => GatewayError | AdmittedKey;
  accountInput?: AccountInputRate;
  /** `limits.extMaxParams` and `limits.extMaxParamBytes`, counted as a large message of a good key arrives. */
  extLimits?: { maxExtParams: number; maxExtParamBytes: number };
  /** The calls still without their first message, and their time to send it (unidentified-calls.ts). */
  calls?: UnidentifiedCalls;
}

/**
 * What a call is watched for: `clientCall`, a client call's first message (its key at the head of a
 * large one); `firstMessage`, the first message of another Gate call (healthCheck, speech); `keyless`,
 * a call of another service (server reflection), which no key ever admits: its first message's
 * bytes, and its place among the unidentified calls for its whole life (unidentified-calls.ts);
 * `untilTrusted`, a `processAsync` stream until its `startServing` is accepted.
 */
export type WatchedCall = 'clientCall' | 'firstMessage' | 'keyless' | 'untilTrusted';

/** How often, and how long at most, an answered stream is checked for its trailers having gone. */
const TRAILERS_CHECK_MS = 2;
const TRAILERS_WAIT_MS = 250;

/**
 * A large first message refused from its head (a missing or wrong key, ext params over their
 * bounds): its answer goes after `afterMs` (once its account has paid for the whole message; for a
 * keyless one, as long as its rest would take at the unauthenticated rate), so its sender's next
 * call comes no sooner than if the rest had been read at that rate; the stream is then reset with
 * NO_ERROR, which tells the peer to stop sending the rest of a request whose complete answer it has
 * (RFC 9113 section 8.1; grpc-go's server does the same, and gRPC clients keep the status they already
 * have). Nothing more of the message is read: grpc-js's reader is detached and the stream kept paused,
 * so the peer waits in flow control. The rest was read and dropped until 2026-11-27: every 8-10 MB
 * received cost the gateway a mark-compact whose 20-40 ms pauses set other accounts' p99 in the
 * hostile bench (issue 25). The reset waits until the answer's end (its trailers) is on the wire:
 * nghttp2 sends a reset before frames queued earlier, and a client that reads the reset first has a
 * call that ended without a status (the likely reason an answer at once, followed by a CANCEL reset,
 * left four test/security calls without an end on 2026-11-26).
 */
function answerThenReset(stream: http2.Http2Stream, answer: () => void, afterMs: number): void {
  stream.removeAllListeners('data');
  stream.pause();
  // grpc-js resumes the stream when its handler starts reading, which may come after this.
  const stayPaused = () => stream.pause();
  stream.on('resume', stayPaused);
  const answered = () => {
    if (stream.destroyed) return;
    answer();
    const started = performance.now();
    const check = setInterval(() => {
      const ended = stream.destroyed || stream.state.localClose === 1;
      if (!ended && performance.now() - started < TRAILERS_WAIT_MS) return;
      clearInterval(check);
      stream.off('resume', stayPaused);
      resetAndDrop(stream);
    }, TRAILERS_CHECK_MS).unref();
  };
  if (afterMs <= 0) return answered();
  const wait = setTimeout(answered, afterMs).unref();
  stream.once('close', () => clearTimeout(wait));
}

/**
 * A stalled call's answer, then its reset once the answer has had TRAILERS_WAIT_MS to leave: one timer
 * per call, where answerThenReset checks every TRAILERS_CHECK_MS, because a peer can time out as many
 * calls at once as it may hold (`server.unauthenticatedCalls`).
 */
function answerThenClose(stream: http2.Http2Stream, answer: () => void): void {
  stream.removeAllListeners('data');
  answer();
  setTimeout(() => resetAndDrop(stream), TRAILERS_WAIT_MS).unref();
}

/**
 * Resets an answered stream with NO_ERROR and lets what it still has of the request flow to nowhere.
 * Node destroys a stream reset with NO_ERROR only once its readable side has ended, and a paused one
 * with bytes unread never ends: every refused call stayed, with what it had received, until its peer
 * closed the connection (ten refused 3.8 MB floods left ten streams; test/security/refused-stream-release.test.ts).
 */
function resetAndDrop(stream: http2.Http2Stream): void {
  if (stream.destroyed) return;
  stream.close(http2.constants.NGHTTP2_NO_ERROR);
  stream.removeAllListeners('data');
  stream.resume();
}

/**
 * The interceptor: watches the calls of the paths `watched` names. A client call is watched until its
 * first message is complete (its admission comes next, and refuses or vouches for all that follows);
 * a `processAsync` stream until `trust(stream)` (its `startServing` accepted). A chunk over the
 * budget answers RESOURCE_EXHAUSTED with the coded error and resets the stream, dropping what
 * grpc-js had buffered of it. A large client message with a good key is read on at its account's input
 * rate (`checks.accountInput`) for the rest of the call: the key's account waits, not every other
 * account; its ext params are counted as it arrives, and a flood of them is answered in-band
 * (EXT_PARAMS_TOO_LARGE, as the preflight answers a small message) without the rest being read.
 */
export function unauthenticatedBytesInterceptor(
  budget: UnauthenticatedBytes,
  watched: (path: string) => WatchedCall | undefined,
  checks: EarlyChecks = {},
): grpc.ServerInterceptor {
  const { checkClientKey, accountInput, extLimits, calls } = checks;
  return (method, call) => {
    const mode = watched(method.path);
    const internals = callInternals(call);
    const stream = internals.stream;
    if (mode && stream) {
      const send = (code: grpc.status, err: GatewayError) => internals.sendStatus?.({ code, details: `${err.code}: ${err.message}` });
      const bytes = new CallBytes(budget);
      const early = mode === 'clientCall' && checkClientKey ? new EarlyKeyCheck(checkClientKey, FREE_BYTES_PER_MESSAGE) : undefined;
      const extScan = early && extLimits ? new ExtParamsScan(extLimits) : undefined;
      // Unauthenticated bytes are read at the gateway-wide rate: past it the stream waits, and HTTP/2
      // flow control makes its sender wait too.
      const pacer = new StreamPacer(stream, (counted) => budget.throttle(counted));
      const slowDown = (counted: number) => pacer.took(counted);
      const stop = () => {
        stream.off('data', onData);
        bytes.release();
        untrusted.delete(call);
        pacer.stop(true);
      };
      // The call is decided (refused, answered, or its key found good): no longer watched, and its
      // place among the unidentified calls given back.
      const settle = () => {
        stop();
        held?.release();
      };
      // Past the budget: the coded status, and a reset that drops what grpc-js buffered of the message.
      const refuse = (code: grpc.status, err: GatewayError) => {
        settle();
        send(code, err);
        stream.close(http2.constants.NGHTTP2_CANCEL);
      };
      // A large first message whose key is missing or wrong: the status once its rest would have been
      // read at the unauthenticated rate, and the rest never read.
      const refuseKey = (err: GatewayError) => {
        settle();
        const rest = Math.max(0, (early?.messageBytes ?? received) - received);
        answerThenReset(stream, () => send(grpc.status.UNAUTHENTICATED, err), budget.readingTimeMs(rest));
      };
      // An admitted caller's large message is charged to its account's rate whole, at once, and the
      // stream waits until the account has paid for it before the rest is read, at full speed (issue 25:
      // another account's large bodies). Read at the rate chunk by chunk, a 4 MiB message took half a
      // second to arrive: its chunks outlived the young generation and were collected by mark-compacts,
      // 100-130 ms of the gateway's CPU per message against 51 ms read at once. Later messages of the
      // call are charged as they arrive. Its ext params are counted as they come.
      const paceAccount = (accountId: number, received: number, messageBytes: number) => {
        if (!accountInput && !extScan) return;
        const charge = accountInput?.chargeOf(accountId);
        let prepaid = Math.max(0, messageBytes - received);
        const account = new StreamPacer(stream, (bytes) => {
          const paid = Math.min(prepaid, bytes);
          prepaid -= paid;
          return charge ? charge(bytes - paid) : 0;
        });
        // Ext params over their bounds: the in-band answer the preflight gives a small message (its code
        // in ClientResponseProto.error, status OK) once the account has paid for the message, and the
        // rest, charged with it, never read (answerThenReset).
        const refuseExt = (err: GatewayError) => {
          account.stop();
          const answer = () => {
            if (!internals.sendMessage) return send(grpc.status.RESOURCE_EXHAUSTED, err);
            internals.sendMessage({ error: toApiErrorProto(err) }, () => internals.sendStatus?.({ code: grpc.status.OK, details: 'OK' }));
          };
          answerThenReset(stream, answer, charge?.owed() ?? 0);
        };
        const onPaced = (chunk: Buffer) => {
          const refused = extScan?.push(chunk);
          if (refused) return refuseExt(refused);
          account.took(chunk.length);
        };
        stream.on('data', onPaced);
        stream.once('close', () => {
          account.stop();
          stream.off('data', onPaced);
        });
        // The whole message, what owed before included: the wait before the rest is read.
        account.hold(charge ? Math.max(charge(messageBytes), charge.owed()) : 0);
        if (extScan?.refused) refuseExt(extScan.refused);
      };
      let received = 0;
      const onData = (chunk: Buffer) => {
        received += chunk.length;
        // A large first message is refused from its head when its key is missing or wrong, and
        // trusted when it is good: the rest is then never buffered (or throttled) for nothing.
        const keyCheck = early?.push(chunk);
        // Every chunk of the first message is counted for its ext params, from the first, in order;
        // a refusal found before the key is decided waits for it (a wrong key is told so first).
        extScan?.push(chunk);
        if (keyCheck instanceof GatewayError) return refuseKey(keyCheck);
        if (keyCheck === null) return stop(); // a message small enough to take whole
        if (keyCheck) {
          settle();
          return paceAccount(keyCheck.accountId, received, early!.messageBytes ?? received);
        }
        if (!bytes.receive(chunk)) {
          return refuse(grpc.status.RESOURCE_EXHAUSTED, gatewayError('UNAUTHENTICATED_BYTES_EXHAUSTED', { args: { limit: budget.limit } }));
        }
        if (mode !== 'untilTrusted' && bytes.messages > 0) return stop();
        slowDown(bytes.lastCounted);
      };
      // Until it has sent its first message (or the key at the head of a large one), a call other than
      // a service stream holds a place among the calls nobody has vouched for, for a bounded time.
      const held =
        calls && mode !== 'untilTrusted'
          ? holdUntilFirstMessage(
              calls,
              stream,
              (err) => {
                stop();
                answerThenClose(stream, () => send(grpc.status.DEADLINE_EXCEEDED, err));
              },
              mode === 'keyless',
            )
          : undefined;
      stream.on('data', onData);
      stream.once('close', stop);
      untrusted.set(call, stop);
      // A call that has answered (grpc-js refusing a message over its limit, say) is no longer
      // watched: what its peer still sends is discarded, and must not be counted or slowed.
      beforeStatus(internals, settle);
    }
    // grpc-js types an interceptor's result as its class; the base call it passes is used as is.
    return call as grpc.ServerInterceptingCall;
  };
}

/** A `processAsync` stream has registered: its bytes no longer count (the handler's stream object). */
export function trust(stream: object): void {
  untrusted.get(callOfStream(stream))?.();
}
