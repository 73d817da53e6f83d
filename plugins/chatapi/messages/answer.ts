/**
 * A chat answer as a Messages API `message` (responses-and-messages.md B.2, C.3, C.4): content
 * blocks (the engine's reasoning as a signed `thinking` block, text, then a `tool_use` per tool call), `stop_reason` from the finish reason, and usage
 * with `input_tokens` excluding cache reads. Pure functions.
 */
import { isJsonObject as isObject, type JsonObject as Json } from '../../_shared/openai/json-object.js';
import { reasoningOf, type ReasoningSeal } from '../../_shared/openai/reasoning-seal.js';

export function stopReason(finishReason: unknown): string {
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

export function messagesUsage(usage: unknown): Json {
  const u = isObject(usage) ? usage : {};
  const prompt = typeof u.prompt_tokens === 'number' ? u.prompt_tokens : 0;
  const cached =
    isObject(u.prompt_tokens_details) && typeof u.prompt_tokens_details.cached_tokens === 'number'
      ? u.prompt_tokens_details.cached_tokens
      : 0;
  return {
    input_tokens: prompt - cached,
    output_tokens: typeof u.completion_tokens === 'number' ? u.completion_tokens : 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
  };
}

/** A tool call's arguments as the `input` object (`{}` when they are not a JSON object). */
export function toolInput(args: unknown): Json {
  if (typeof args !== 'string') return {};
  try {
    const value = JSON.parse(args) as unknown;
    return isObject(value) ? value : {};
  } catch {
    return {};
  }
}

export function messageFromChat(completion: Json, id: string, model: string, seal?: ReasoningSeal): Json {
  const choice = Array.isArray(completion.choices) && isObject(completion.choices[0]) ? completion.choices[0] : {};
  const message = isObject(choice.message) ? choice.message : {};
  const content: Json[] = [];
  // The engine's reasoning first, as Anthropic's models put their thinking before the answer.
  const thinking = reasoningOf(message);
  if (thinking && seal) content.push({ type: 'thinking', thinking, signature: seal.sign(thinking) });
  if (typeof message.content === 'string' && message.content) content.push({ type: 'text', text: message.content });
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (!isObject(call)) continue;
    const fn = isObject(call.function) ? call.function : {};
    content.push({ type: 'tool_use', id: call.id, name: fn.name, input: toolInput(fn.arguments) });
  }
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason(choice.finish_reason),
    stop_sequence: null,
    usage: messagesUsage(completion.usage),
  };
}
