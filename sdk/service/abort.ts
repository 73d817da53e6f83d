/**
 * A request's cancellation, with its AbortSignal made only when someone asks for it. Most handlers
 * never read `ctx.signal`, and an AbortController costs a few microseconds per request, a
 * measurable share of a small model's answer; the SDK itself checks `aborted`, which costs nothing.
 */
export class LazyAbort {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  /** The signal, created on first use (already aborted when the request was cancelled before). */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
