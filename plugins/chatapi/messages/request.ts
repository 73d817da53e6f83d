/**
 * A Messages API request translated to the Chat Completions request of the standard adapter
 * (responses-and-messages.md C.1, C.2): `system` hoisted into a system message, blocks into chat
 * parts (images as data URLs), `tool_use` into an assistant's `tool_calls`, `tool_result` into tool
 * messages placed before the rest of their user turn, and the options renamed. Pure functions.
 */
import { gatewayError } from '../../../core/plugins/index.js';
import { isJsonObject as isObject, type JsonObject as Json } from '../../_shared/openai/json-object.js';
import type { MessagesBody } from './schema.js';
import { effortOfMessages, REASONING_EFFORT } from '../reasoning-effort.js';

const invalid = (param: string, reason: string) => gatewayError('VALIDATION_FAILED', { param, args: { reason: `${param} ${reason}` } });

/** The chat request's fields other than `model`. */
export function toChatRequest(body: MessagesBody, thinking: ThinkingCheck = () => false): Json {
  const messages: Json[] = [];
  const system = systemText(body.system);
  if (system) messages.push({ role: 'system', content: system });
  body.messages.forEach((message, index) => messages.push(...toChatMessages(message, index, thinking)));

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
      function: {
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        parameters: tool.input_schema ?? { type: 'object' },
      },
    }));
  }
  const effort = effortOfMessages(body.output_config, body.thinking);
  if (effort) chat[REASONING_EFFORT] = effort;
  // Structured output (output_config.format) is Chat's json_schema response_format (C.2).
  const format = isObject(body.output_config) && isObject(body.output_config.format) ? body.output_config.format : undefined;
  if (format?.type === 'json_schema')
    chat.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema ?? {}, strict: true } };
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
export const CHAT_TO_MESSAGES_PARAM: Readonly<Record<string, string>> = {
  stop: 'stop_sequences',
  user: 'metadata.user_id',
  reasoning_effort: 'thinking',
};

function systemText(system: MessagesBody['system'] | Json[]): string {
  if (system === undefined) return '';
  if (typeof system === 'string') return system;
  return system.map((b) => (b.type === 'text' ? String(b.text ?? '') : '')).join('\n');
}

function toChatMessages(message: MessagesBody['messages'][number], index: number, thinking: ThinkingCheck): Json[] {
  const { role, content } = message;
  // Instructions anywhere in the conversation stay where they are, as chat system messages.
  if (role === 'system' || role === 'developer')
    return [{ role: 'system', content: typeof content === 'string' ? content : systemText(content) }];
  if (typeof content === 'string') return [{ role, content }];
  if (role === 'assistant') {
    let text = '';
    let reasoning = '';
    const calls: Json[] = [];
    content.forEach((block, i) => {
      if (block.type === 'text') text += String(block.text ?? '');
      else if (block.type === 'tool_use')
        calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
      // The engine's own reasoning of an earlier turn goes back to it, if the gateway signed it.
      else if (block.type === 'thinking' && thinking(block, `messages[${index}].content[${i}]`)) reasoning += String(block.thinking ?? '');
      // redacted_thinking: encrypted by another provider, meaningless to a chat engine.
    });
    const out: Json = { role, content: text || (calls.length ? null : '') };
    if (reasoning) out.reasoning_content = reasoning;
    if (calls.length) out.tool_calls = calls;
    return [out];
  }
  // A user turn: its tool results first, as tool messages (C.6), then the rest as one user message.
  const out: Json[] = [];
  const parts: Json[] = [];
  content.forEach((block, i) => {
    const param = `messages[${index}].content[${i}]`;
    switch (block.type) {
      case 'tool_result': {
        const result = toolResult(block.content, param);
        out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: (block.is_error === true ? 'Error: ' : '') + result.text });
        // A tool message takes text only: the result's images follow in the user turn, named.
        if (result.media.length)
          parts.push({ type: 'text', text: `(attachments of tool result ${String(block.tool_use_id)})` }, ...result.media);
        break;
      }
      case 'text':
        parts.push({ type: 'text', text: String(block.text ?? '') });
        break;
      case 'image':
        parts.push({ type: 'image_url', image_url: { url: imageUrl(block.source, param) } });
        break;
      case 'document':
        parts.push(documentPart(block, param));
        break;
      default:
        throw invalid(
          `${param}.type`,
          `'${String(block.type)}' is not supported by chat services (text, image, document, tool_use, tool_result)`,
        );
    }
  });
  if (parts.length) out.push({ role, content: textOnly(parts) ?? parts });
  return out;
}

/**
 * Text blocks alone go as one string (joined like system blocks), the form every chat engine takes,
 * as the Responses translation sends them: llama.cpp's llama-cpp-python server renders a model's
 * template as it is, and templates that concatenate `content` fail on a list (Claude Code's first turn
 * is nine text blocks). Parts stay a list when they carry images or files.
 */
function textOnly(parts: readonly Json[]): string | undefined {
  return parts.every((part) => part.type === 'text') ? parts.map((part) => String(part.text)).join('\n') : undefined;
}

/** Whether a thinking block is the gateway's own (its signature verifies); throws when it claims to be and is not. */
export type ThinkingCheck = (block: Json, param: string) => boolean;

/** A `document` block as a chat part: plain text as text, a PDF (base64 or URL) as a file part. */
function documentPart(block: Json, param: string): Json {
  const source = isObject(block.source) ? block.source : {};
  const title = typeof block.title === 'string' ? block.title : undefined;
  if (source.type === 'text' && typeof source.data === 'string')
    return { type: 'text', text: title ? `${title}\n\n${source.data}` : source.data };
  if (source.type === 'content' && Array.isArray(source.content)) return { type: 'text', text: resultText(source.content) };
  if (source.type === 'base64' && typeof source.data === 'string') {
    return {
      type: 'file',
      file: {
        file_data: `data:${String(source.media_type ?? 'application/pdf')};base64,${source.data}`,
        ...(title ? { filename: title } : {}),
      },
    };
  }
  if (source.type === 'url' && typeof source.url === 'string')
    return { type: 'file', file: { file_url: source.url, ...(title ? { filename: title } : {}) } };
  throw invalid(
    `${param}.source`,
    'must be {type:"text",data}, {type:"base64",media_type,data}, {type:"url",url} or {type:"content",content}',
  );
}

/** A tool result's text, and its images and documents as chat parts. */
function toolResult(content: unknown, param: string): { text: string; media: Json[] } {
  if (!Array.isArray(content)) return { text: resultText(content), media: [] };
  const media: Json[] = [];
  content.forEach((b, i) => {
    if (isObject(b) && b.type === 'image')
      media.push({ type: 'image_url', image_url: { url: imageUrl(b.source, `${param}.content[${i}]`) } });
    else if (isObject(b) && b.type === 'document') media.push(documentPart(b, `${param}.content[${i}]`));
  });
  return { text: resultText(content), media };
}

function imageUrl(source: unknown, param: string): string {
  if (isObject(source) && source.type === 'base64' && typeof source.data === 'string')
    return `data:${String(source.media_type ?? 'image/png')};base64,${source.data}`;
  if (isObject(source) && source.type === 'url' && typeof source.url === 'string') return source.url;
  throw invalid(`${param}.source`, 'must be {type:"base64",media_type,data} or {type:"url",url}');
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b) => (isObject(b) && b.type === 'text' ? String(b.text ?? '') : '')).join('');
  return '';
}
