/**
 * One request to the engine whose answer is read whole (every request that does not ask for a
 * stream). It goes through undici's dispatch API with a handler that collects the body, not through
 * `request()`: that one wraps the answer in a body stream, reads it back through a promise chain and
 * wants an AbortSignal per call, about 15 µs of CPU per request, a tenth of the gateway's share on
 * the one-process path (bench/oncpu.ts). Errors are undici's own, as `request()` raises them
 * (connect and header/body timeouts from the pool's options, socket errors). An answer longer than
 * `maxBytes` is not held: the request is aborted as soon as it passes the limit, and `answer`
 * rejects with AnswerTooLarge.
 */
import type { Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'undici/types/header.js';

export interface WholeAnswer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** The engine's answer passed `maxBytes`; what was read of it has been dropped. */
export class AnswerTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the answer is longer than ${limit} bytes`);
  }
}

export interface WholeAnswerCall {
  readonly answer: Promise<WholeAnswer>;
  /** Stops the request (the connection is closed); `answer` rejects. */
  abort(): void;
  readonly aborted: boolean;
}

export function requestWholeAnswer(
  dispatcher: Dispatcher,
  options: { path: string; method: 'POST' | 'GET'; headers: Record<string, string>; body?: string },
  maxBytes: number,
): WholeAnswerCall {
  let controller: Dispatcher.DispatchController | undefined;
  let aborted = false;
  const answer = new Promise<WholeAnswer>((resolve, reject) => {
    let chunks: Buffer[] = [];
    let bytes = 0;
    let statusCode = 0;
    let headers: IncomingHttpHeaders = {};
    dispatcher.dispatch(options, {
      onRequestStart(started) {
        controller = started;
        // A cancel that came before the request started.
        if (aborted) started.abort(new Error('aborted'));
      },
      onResponseStart(_controller, status, responseHeaders) {
        statusCode = status;
        headers = responseHeaders;
      },
      onResponseData(running, chunk) {
        if (bytes > maxBytes) return; // aborted already
        bytes += chunk.length;
        if (bytes <= maxBytes) {
          chunks.push(chunk);
          return;
        }
        chunks = [];
        running.abort(new AnswerTooLarge(maxBytes));
      },
      onResponseEnd() {
        resolve({ statusCode, headers, text: Buffer.concat(chunks).toString('utf8') });
      },
      onResponseError(_controller, err) {
        reject(err);
      },
    });
  });
  return {
    answer,
    abort() {
      if (aborted) return;
      aborted = true;
      controller?.abort(new Error('aborted'));
    },
    get aborted() {
      return aborted;
    },
  };
}

/**
 * A response body read whole as text, at most `maxBytes` (AnswerTooLarge past it; leaving the loop
 * destroys the body): for the engine that answers a streamed request with one JSON document.
 */
export async function readBoundedText(body: AsyncIterable<Buffer>, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > maxBytes) throw new AnswerTooLarge(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
