/**
 * A streamed upstream answer is complete only once its terminal event came (`data: [DONE]`,
 * `message_stop`, `response.completed`…). A stream that ends before it (a dropped connection, a
 * crashed engine) was cut off, and must reach the caller as an error, never as a clean, shorter
 * answer: the clients would report success with a truncated text.
 */
import { ServiceError } from '@model-gateway/sdk';
import type { SseEvent } from './sse.js';

/**
 * The events of `events` up to and including the terminal one; throws a 502
 * `upstream.stream_cut_off` when the stream ends before it.
 */
export async function* untilTerminal(events: AsyncIterable<SseEvent>, isTerminal: (event: SseEvent) => boolean, expected: string): AsyncGenerator<SseEvent> {
  for await (const event of events) {
    yield event;
    if (isTerminal(event)) return;
  }
  throw new ServiceError('upstream.stream_cut_off', `The upstream ended its stream before ${expected}: the answer is incomplete`, 502);
}
