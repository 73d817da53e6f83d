/**
 * Flow-control building blocks every relay uses (the Gate's client calls, speech, the chat adapters'
 * SSE, the audio routes): wait until a writable has room, and turn a gRPC caller's cancel into an
 * AbortSignal. One home for each, so that every relay stops on the same events.
 */

type EventSource = { once(event: string, listener: () => void): unknown; off(event: string, listener: () => void): unknown };

/** The events after which a stream will never emit 'drain'. */
const ENDED = ['close', 'finish', 'error', 'cancelled'];

/**
 * Resolves on 'drain', or when the stream ends (close, finish, error, a gRPC 'cancelled') or any of
 * `signals` aborts: then nothing will drain, and the writer must look at why before writing again.
 */
export function drained(stream: EventSource, signals: readonly AbortSignal[] = []): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      stream.off('drain', done);
      for (const event of ENDED) stream.off(event, done);
      for (const signal of signals) signal.removeEventListener('abort', done);
      resolve();
    };
    if (signals.some((s) => s.aborted)) return resolve();
    stream.once('drain', done);
    for (const event of ENDED) stream.once(event, done);
    for (const signal of signals) signal.addEventListener('abort', done, { once: true });
  });
}

type Cancellable = { on(e: 'cancelled', f: () => void): unknown; off(e: 'cancelled', f: () => void): unknown };

/** An AbortSignal that fires when a gRPC caller cancels or goes away; `dispose` when the call is done. */
export function abortOnCancel(call: Cancellable): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onCancel = () => controller.abort();
  call.on('cancelled', onCancel);
  return { signal: controller.signal, dispose: () => call.off('cancelled', onCancel) };
}
