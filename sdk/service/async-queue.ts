/**
 * A single-consumer async iterable fed by push(): the input stream of one partialPredict request.
 * end() lets the consumer drain what is queued and finish; fail() makes the next read throw. A
 * consumer that stops reading (a `break`, `return` or throw inside `for await`) closes it too, but
 * leaves `producerDone` false: its producer may still have items on their way.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiting: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  private ended = false;
  private failure: { error: unknown } | undefined;
  private abandoned = false;

  get closed(): boolean {
    return this.producerDone || this.abandoned;
  }

  /** Whether the producer ended or failed it (rather than the consumer leaving early, or nobody yet). */
  get producerDone(): boolean {
    return this.ended || this.failure !== undefined;
  }

  push(item: T): void {
    if (this.closed) return;
    if (this.waiting) {
      const { resolve } = this.waiting;
      this.waiting = undefined;
      resolve({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  end(): void {
    if (this.closed) return;
    this.ended = true;
    if (this.waiting) {
      const { resolve } = this.waiting;
      this.waiting = undefined;
      resolve({ value: undefined, done: true });
    }
  }

  fail(error: unknown): void {
    if (this.closed) return;
    this.failure = { error };
    if (this.waiting) {
      const { reject } = this.waiting;
      this.waiting = undefined;
      reject(error);
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.items.length > 0) return Promise.resolve({ value: this.items.shift() as T, done: false });
        if (this.failure) return Promise.reject(this.failure.error);
        if (this.ended || this.abandoned) return Promise.resolve({ value: undefined, done: true });
        return new Promise<IteratorResult<T>>((resolve, reject) => {
          this.waiting = { resolve, reject };
        });
      },
      return: () => {
        this.abandoned = true;
        this.items.length = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
