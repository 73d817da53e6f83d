/**
 * Anthropic Messages streaming for services of the `anthropic` family (openai-wire.md section 6):
 * every frame is a named event, `event: <type>\ndata: <json>\n\n`, and there is no `[DONE]`.
 *
 * Partial-answer format: each partial answer of the service carries one stream event, as the event's
 * data object itself (`{"type":"content_block_delta",…}`); Anthropic's event name always equals the
 * data's `type`, so the adapter takes the name from there and writes the JSON text unchanged. The
 * wrapped form `{"event": "<name>", "data": {…}}` is accepted too.
 */
import type { GatewayError } from '../../../core/plugins/index.js';
import { isJsonObject as isObject, parseJsonObject } from '../openai/json-object.js';
import type { SseFormat } from '../openai/relay.js';
import { anthropicErrorData } from './errors.js';

/** Per streamed answer: whether `message_stop` went out (a stream without it is cut off). */
export interface AnthropicStreamState {
  stopped: boolean;
}

/** `"type"` as the first key, the way Anthropic (and the example proxy) serialise events. */
const LEADING_TYPE = /^\{\s*"type"\s*:\s*"([A-Za-z0-9_.-]+)"/;

export const named = (event: string, data: string): string => `event: ${event}\ndata: ${data}\n\n`;

/** The SSE frame of one partial answer; '' when it carries no event. */
export function anthropicEvent(json: string, state: AnthropicStreamState): string {
  const frame = eventFrame(json);
  if (frame.startsWith('event: message_stop\n')) state.stopped = true;
  return frame;
}

function eventFrame(json: string): string {
  const lead = LEADING_TYPE.exec(json);
  if (lead) return named(lead[1]!, json);
  const value = parseJsonObject(json);
  if (!value) return '';
  if (typeof value.event === 'string' && value.data !== undefined) {
    const data = typeof value.data === 'string' ? value.data.replace(/[\r\n]+/g, ' ') : JSON.stringify(value.data);
    return named(value.event, data);
  }
  return typeof value.type === 'string' ? named(value.type, json) : '';
}

/** A mid-stream error as Anthropic sends it: `event: error` with `{"type":"error","error":{type,message}}`. */
export function anthropicErrorEvent(err: GatewayError): string {
  return named('error', anthropicErrorData(err));
}

/** Anthropic's stream framing for services that speak the Messages API themselves. */
export const ANTHROPIC_SSE: SseFormat<AnthropicStreamState> = {
  partial: anthropicEvent,
  whole: (json, state) => {
    const events = anthropicMessageAsEvents(json);
    if (events.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')) state.stopped = true;
    return events;
  },
  error: anthropicErrorEvent,
  end: '',
  terminated: (state) => state.stopped,
};

/**
 * A complete Message given to a streaming request, as the events a streaming service would have
 * sent: message_start, each content block (start, one delta, stop), message_delta, message_stop.
 */
export function anthropicMessageAsEvents(json: string): string {
  const message = parseJsonObject(json);
  if (!message) return '';
  if (message.type !== 'message') return typeof message.type === 'string' ? named(message.type, JSON.stringify(message)) : '';
  const usage = isObject(message.usage) ? message.usage : {};
  let out = named(
    'message_start',
    JSON.stringify({
      type: 'message_start',
      message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 0 } },
    }),
  );
  const blocks = Array.isArray(message.content) ? message.content : [];
  blocks.forEach((block, index) => {
    if (!isObject(block)) return;
    if (block.type === 'text') {
      out += named(
        'content_block_start',
        JSON.stringify({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
      );
      out += named(
        'content_block_delta',
        JSON.stringify({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text ?? '' } }),
      );
    } else if (block.type === 'tool_use') {
      out += named('content_block_start', JSON.stringify({ type: 'content_block_start', index, content_block: { ...block, input: {} } }));
      out += named(
        'content_block_delta',
        JSON.stringify({
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) },
        }),
      );
    } else {
      out += named('content_block_start', JSON.stringify({ type: 'content_block_start', index, content_block: block }));
    }
    out += named('content_block_stop', JSON.stringify({ type: 'content_block_stop', index }));
  });
  out += named(
    'message_delta',
    JSON.stringify({
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason ?? 'end_turn', stop_sequence: message.stop_sequence ?? null },
      usage: { output_tokens: usage.output_tokens ?? 0 },
    }),
  );
  out += named('message_stop', '{"type":"message_stop"}');
  return out;
}
