import http2 from 'node:http2';
import { gatewayError, type GatewayError } from '../errors.js';

/**
 * A gateway-wide bound on gRPC calls that have not yet sent their first message (for a large client
 * message, its head with the key), and a time for them to send it. Until then a call is an HTTP/2
 * stream and grpc-js's call state, about 7 KB, from a peer nobody has vouched for; grpc-js waits for
 * a unary call's message forever and advertises no limit of concurrent streams. One keyless
 * connection held 20,000 such calls open, the gateway's RSS 133 → 268 MB, none closed 13 s later
 * (issue 25). Past `limit` a new call's stream is reset with REFUSED_STREAM, which costs the gateway
 * nothing more and which gRPC clients retry by themselves (the HTTP/2 answer to a peer past a
 * server's concurrent streams); a call that has not sent its first message within `timeoutMs` is
 * answered DEADLINE_EXCEEDED (FIRST_MESSAGE_TIMEOUT), then reset.
 *
 * `processAsync` streams are not counted: `gate.registrationTimeoutMs` bounds their time, and a flood
 * of client calls must not keep services from registering.
 */
export class UnidentifiedCalls {
  #count = 0;

  constructor(
    /** Calls without their first message held at once, over all peers (`server.unauthenticatedCalls`). */
    readonly limit: number,
    /** How long a call may take to send its first message (`server.firstMessageTimeoutMs`). */
    readonly timeoutMs: number,
  ) {}

  /** Takes a place for a new call; false when `limit` calls already wait. */
  enter(): boolean {
    if (this.#count >= this.limit) return false;
    this.#count++;
    return true;
  }

  /** A call has sent its first message, or ended. */
  leave(): void {
    this.#count--;
  }
}

/** What holding a call needs of its HTTP/2 stream. */
interface CallStream {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  off(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  close(code: number): void;
}

/** A call's place among the unidentified ones, given back once it is identified, refused or closed. */
export interface HeldCall {
  release(): void;
}

/**
 * Holds a place in `calls` for a new call until its first message has arrived whole (read from the
 * gRPC framing of its stream: a flag byte, a 4-byte length, the message) or `release` is called (its
 * key found good at the head of a large message, its refusal, its end). With no place left the
 * stream is reset at once (REFUSED_STREAM); past `calls.timeoutMs`, `timedOut` answers it.
 *
 * `forLife`: a call no key ever admits (server reflection) keeps its place until it ends, and
 * `timedOut` answers it once it has sent no message for `calls.timeoutMs`: otherwise one request
 * would buy a peer a stream for ever.
 */
export function holdUntilFirstMessage(
  calls: UnidentifiedCalls,
  stream: CallStream,
  timedOut: (err: GatewayError) => void,
  forLife = false,
): HeldCall {
  if (!calls.enter()) {
    // After the interceptors have run, as grpc-js answers a bad deadline header.
    process.nextTick(() => stream.close(http2.constants.NGHTTP2_REFUSED_STREAM));
    return { release: () => undefined };
  }
  // The gRPC framing of the current message: 5 prefix bytes, the last 4 its length, then the message.
  let prefixSeen = 0;
  let length = 0;
  let sentOne = false;
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    calls.leave();
    clearTimeout(timer);
    stream.off('data', onData);
  };
  const onData = (chunk: Buffer) => {
    for (let at = 0; at < chunk.length;) {
      if (prefixSeen < 5) {
        if (prefixSeen > 0) length = length * 256 + chunk[at]!;
        prefixSeen++;
        at++;
        if (prefixSeen < 5 || length > 0) continue;
      } else {
        const taken = Math.min(length, chunk.length - at);
        length -= taken;
        at += taken;
        if (length > 0) continue;
      }
      // A message is complete.
      if (!forLife) return release();
      sentOne = true;
      prefixSeen = 0;
      timer.refresh();
    }
  };
  // A timer per call: Node keeps timers of one duration in one list, so each costs a constant
  // insertion and removal (about 1.5 µs a call with the rest of this, in a microbenchmark).
  const timer = setTimeout(() => {
    release();
    const args = { timeoutMs: calls.timeoutMs };
    timedOut(gatewayError(sentOne ? 'IDLE_CALL_TIMEOUT' : 'FIRST_MESSAGE_TIMEOUT', { args }));
  }, calls.timeoutMs);
  timer.unref();
  stream.on('data', onData);
  stream.on('close', release);
  return { release };
}
