import { gatewayError, toGatewayError, type GatewayError } from '../errors.js';
import type { ServiceAnswer, ServiceCall } from '../gate/service-call.js';

/**
 * A queue between a producer that must not be paused (a model service's answers, which share one
 * processAsync stream with every other request of that instance) and a consumer that may stall (a
 * caller reading slowly). It counts the bytes it holds; the owner decides what to do when `push`
 * reports that the bound is exceeded (speech calls fail with SPEECH_CALLER_TOO_SLOW).
 */
export class BoundedQueue<T> implements AsyncIterable<T> {
  readonly limitBytes: number;
  readonly #items: { item: T; size: number }[] = [];
  readonly #abort = new AbortController();
  #bytes = 0;
  #closed = false;
  #failure: GatewayError | undefined;
  #wake: (() => void) | undefined;

  constructor(limitBytes: number) {
    this.limitBytes = limitBytes;
  }

  /** Bytes waiting for the consumer. */
  get bufferedBytes(): number {
    return this.#bytes;
  }

  /** Aborts when the queue fails, so a consumer waiting on something else (a 'drain') can stop. */
  get failedSignal(): AbortSignal {
    return this.#abort.signal;
  }

  get done(): boolean {
    return this.#closed || this.#failure !== undefined;
  }

  /** Adds an item; false when the queue now holds more than `limitBytes` (the item is kept). */
  push(item: T, size: number): boolean {
    if (this.done) return true;
    this.#items.push({ item, size });
    this.#bytes += size;
    this.#wakeUp();
    return this.#bytes <= this.limitBytes;
  }

  /** No more items: the consumer ends after the queued ones. */
  close(): void {
    if (this.done) return;
    this.#closed = true;
    this.#wakeUp();
  }

  /**
   * Ends the queue with an error. The consumer gets the queued items first, unless `discard` drops
   * them (an overflow: the caller is not reading, so holding them helps nobody).
   */
  fail(error: GatewayError, discard = false): void {
    if (this.done) return;
    this.#failure = error;
    if (discard) {
      this.#items.length = 0;
      this.#bytes = 0;
    }
    this.#abort.abort(error);
    this.#wakeUp();
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const next = this.#items.shift();
      if (next) {
        this.#bytes -= next.size;
        yield next.item;
        continue;
      }
      if (this.#failure) throw this.#failure;
      if (this.#closed) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }
}

/**
 * Moves a service call's answers into a bounded queue until the call ends: `decode` turns an answer
 * into an item and its size (or skips it). A queue over its bound fails with SPEECH_CALLER_TOO_SLOW
 * through `onOverflow` (which cancels the call); a failed call fails the queue. Shared by synthesis and
 * recognition.
 */
export async function pumpInto<T>(
  call: ServiceCall,
  queue: BoundedQueue<T>,
  decode: (answer: ServiceAnswer) => { item: T; size: number } | undefined,
  onOverflow: (error: GatewayError) => void,
): Promise<void> {
  try {
    for await (const answer of call) {
      const decoded = decode(answer);
      if (!decoded) continue;
      if (!queue.push(decoded.item, decoded.size)) {
        onOverflow(gatewayError('SPEECH_CALLER_TOO_SLOW', { args: { limit: queue.limitBytes } }));
        return;
      }
    }
    queue.close();
  } catch (err) {
    const error = toGatewayError(err);
    call.cancel(error);
    queue.fail(error);
  }
}
