/**
 * A Messages API request translated to the Chat Completions request of the standard adapter
 * (responses-and-messages.md C.1, C.2): `system` hoisted into a system message, blocks into chat
 * parts (images as data URLs), `tool_use` into an assistant's `tool_calls`, `tool_result` into tool
 * messages placed before the rest of their user turn, and the options renamed. Pure functions.
 */
import { gatewayError } from '../../../core/plugins/index.js';
import { isJsonObject as isObject, type JsonObject as Json } from '../../_shared/openai/json-object.js';
import type { MessagesBody } from './schema.js';

const invalid = (param: string, reason: string) => gatewayError('VALIDATION_FAILED', { param, args: { reason: `${param} ${reason}` } });

/** The chat request's fields other than `model`. */
export function toChatRequest(body: MessagesBody): Json {
  const messages: Json[] = [];
  const system = systemText(body.system);
  if (system) messages.push({ role: 'system', content: system });
  body.messages.forEach((message, index) => messages.push(...toChatMessages(message, index)));

  const chat: Json = { messages };
  if (body.stream === true) {
    chat.stream = true;
    // message_delta carries the usage, so ask the service for it.
    chat.stream_options = { include_usage: true };
  }
  if (body.max_tokens !== undefined) chat.max_tokens = body.max_tokens;
  if (body.stop_sequences?.length) chat.stop = body.stop_sequences;
  if (body.temperature !== undefined) chat.temperature = body.temperature;
  if (body.top_p !== undefined) chat.top_p = body.top_p;
  if (body.top_k !== undefined) chat.top_k = body.top_k;
  if (typeof body.metadata?.user_id === 'string') chat.user = body.metadata.user_id;
  if (body.tools?.length) {
    chat.tools = body.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, ...(tool.description !== undefined ? { description: tool.description } : {}), parameters: tool.input_schema ?? { type: 'object' } },
    }));
  }
  // Structured output (output_config.format) is Chat's json_schema response_format (C.2).
  const format = isObject(body.output_config) && isObject(body.output_config.format) ? body.output_config.format : undefined;
  if (format?.type === 'json_schema') chat.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema ?? {}, strict: true } };
  const choice = body.tool_choice;
  if (choice) {
    if (choice.type === 'auto') chat.tool_choice = 'auto';
    else if (choice.type === 'any') chat.tool_choice = 'required';
    else if (choice.type === 'none') chat.tool_choice = 'none';
    else chat.tool_choice = { type: 'function', function: { name: String(choice.name ?? '') } };
    if (choice.disable_parallel_tool_use === true) chat.parallel_tool_calls = false;
  }
  return chat;
}

/** Chat config names that differ from the Messages request's, for errors that name a field. */
export const CHAT_TO_MESSAGES_PARAM: Readonly<Record<string, string>> = { stop: 'stop_sequences', user: 'metadata.user_id' };

function systemText(system: MessagesBody['system']): string {
  if (system === undefined) return '';
  if (typeof system === 'string') return system;
  return system.map((b) => (b.type === 'text' ? String(b.text ?? '') : '')).join('\n');
}

function toChatMessages(message: MessagesBody['messages'][number], index: number): Json[] {
  const { role, content } = message;
  if (typeof content === 'string') return [{ role, content }];
  if (role === 'assistant') {
    let text = '';
    const calls: Json[] = [];
    for (const block of content) {
      if (block.type === 'text') text += String(block.text ?? '');
      else if (block.type === 'tool_use') calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
      // thinking and redacted_thinking: a chat service has no use for them.
    }
    const out: Json = { role, content: text || (calls.length ? null : '') };
    if (calls.length) out.tool_calls = calls;
    return [out];
  }
  // A user turn: its tool results first, as tool messages (C.6), then the rest as one user message.
  const out: Json[] = [];
  const parts: Json[] = [];
  content.forEach((block, i) => {
    const param = `messages[${index}].content[${i}]`;
    switch (block.type) {
      case 'tool_result':
        out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: (block.is_error === true ? 'Error: ' : '') + resultText(block.content) });
        break;
      case 'text':
        parts.push({ type: 'text', text: String(block.text ?? '') });
        break;
      case 'image':
        parts.push({ type: 'image_url', image_url: { url: imageUrl(block.source, param) } });
        break;
      default:
        throw invalid(`${param}.type`, `'${String(block.type)}' is not supported by chat services (text, image, tool_use, tool_result)`);
    }
  });
  if (parts.length) out.push({ role, content: parts });
  return out;
}

function imageUrl(source: unknown, param: string): string {
  if (isObject(source) && source.type === 'base64' && typeof source.data === 'string') return `data:${String(source.media_type ?? 'image/png')};base64,${source.data}`;
  if (isObject(source) && source.type === 'url' && typeof source.url === 'string') return source.url;
  throw invalid(`${param}.source`, 'must be {type:"base64",media_type,data} or {type:"url",url}');
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b) => (isObject(b) && b.type === 'text' ? String(b.text ?? '') : '')).join('');
  return '';
}
