/** Reading Server-Sent Events from an HTTP response body (an engine's streamed answer). */
import { AnswerTooLarge } from './whole-answer.js';

export interface SseEvent {
  /** The `event:` name; undefined for data-only events (OpenAI). */
  event: string | undefined;
  /** The `data:` lines joined with `\n`. */
  data: string;
}

/**
 * The events of an SSE body in order; comments and `id:`/`retry:` fields are skipped. An event (or a
 * line) longer than `maxEventBytes` throws AnswerTooLarge: an engine that never ends a line must not
 * make the gateway hold all it sends.
 */
export async function* readSse(body: AsyncIterable<Uint8Array> | null, maxEventBytes: number): AsyncGenerator<SseEvent> {
  if (!body) return;
  const decoder = new TextDecoder();
  let buffer = '';
  let event: string | undefined;
  let data: string[] = [];
  let dataChars = 0;
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    let newline: number;
    while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
      if (line === '') {
        if (data.length) yield { event, data: data.join('\n') };
        event = undefined;
        data = [];
        dataChars = 0;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') {
        data.push(value);
        dataChars += value.length;
      }
    }
    // What is held now: the unfinished line and the data lines of the unfinished event.
    if (buffer.length + dataChars > maxEventBytes) throw new AnswerTooLarge(maxEventBytes);
  }
  if (data.length) yield { event, data: data.join('\n') };
}
