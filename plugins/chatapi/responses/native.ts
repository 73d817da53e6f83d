/**
 * Stream framing for services that speak the Responses API themselves (`nativeResponses`): each
 * partial answer is one typed event's data object, written as `event: <type>` + `data:` (the name
 * is the data's `type`, which services put first). The stream must reach a terminal event
 * (`response.completed`, `.incomplete`, `.failed` or `error`); one that ends before is cut off.
 */
import { GatewayError } from '../../../core/plugins/index.js';
import { named } from '../../_shared/anthropic/events.js';
import { parseJsonObject } from '../../_shared/openai/json-object.js';
import type { SseFormat } from '../../_shared/openai/relay.js';

const LEADING_TYPE = /^\{\s*"type"\s*:\s*"([A-Za-z0-9_.-]+)"/;
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

export interface NativeStreamState {
  terminated: boolean;
  sequence: number;
}

function typeOf(json: string): string | undefined {
  const lead = LEADING_TYPE.exec(json);
  if (lead) return lead[1];
  const value = parseJsonObject(json);
  return typeof value?.type === 'string' ? value.type : undefined;
}

export const NATIVE_RESPONSES_SSE: SseFormat<NativeStreamState> = {
  partial(json, state) {
    const type = typeOf(json);
    if (!type) return '';
    if (TERMINAL.has(type)) state.terminated = true;
    state.sequence++;
    return named(type, json);
  },
  whole(json, state) {
    // A response object given to a streaming request: its terminal event alone.
    const response = parseJsonObject(json);
    if (!response) return '';
    state.terminated = true;
    const type =
      response.status === 'incomplete' ? 'response.incomplete' : response.status === 'failed' ? 'response.failed' : 'response.completed';
    return named(type, JSON.stringify({ type, sequence_number: state.sequence++, response }));
  },
  error(err: GatewayError, state) {
    const message = err.expose ? err.message : 'Internal gateway error';
    const code = err.upstream?.code ?? err.code;
    const param = err.upstream ? err.upstream.param : err.param;
    const data = {
      type: 'error',
      sequence_number: state.sequence++,
      code,
      message,
      param,
      error: { type: err.upstream?.type ?? err.type, code, message, param },
    };
    return named('error', JSON.stringify(data));
  },
  end: '',
  terminated: (state) => state.terminated,
};
