/** Options of `every`. */
export interface EveryOptions {
  /**
   * Let the process exit while the loop runs (default true): a background loop (heartbeats, polls,
   * sweeps) must never be what keeps a gateway that was told to stop alive.
   */
  unref?: boolean;
  /** Also run once now, before the first interval passes (default false). */
  now?: boolean;
  /**
   * Gets what a run threw or rejected with; the loop goes on. Without it an error propagates as it
   * would from a bare setInterval (an uncaught exception or an unhandled rejection).
   */
  onError?: (err: unknown) => void;
}

/**
 * Runs `fn` every `ms` milliseconds until the returned stop function is called (stopping twice is
 * harmless). When `fn` returns a promise, the next run waits for it: a tick that comes while a run is
 * still going is skipped, so slow work (a store under load) never piles up runs of itself.
 */
export function every(ms: number, fn: () => unknown, options: EveryOptions = {}): () => void {
  const { onError } = options;
  let running = false;
  const tick = (): void => {
    if (running) return;
    let result: unknown;
    try {
      result = fn();
    } catch (err) {
      if (!onError) throw err;
      onError(err);
      return;
    }
    if (!(result instanceof Promise)) return;
    running = true;
    const settled = result.finally(() => (running = false));
    if (onError) settled.catch(onError);
  };
  const timer = setInterval(tick, ms);
  if (options.unref !== false) timer.unref();
  if (options.now) tick();
  return () => clearInterval(timer);
}
