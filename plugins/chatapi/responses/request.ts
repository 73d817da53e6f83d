/**
 * A Responses API request translated to the Chat Completions request the standard adapter makes
 * (responses-and-messages.md A.1, A.2, C.1, C.2): `instructions` and `input` become messages, flat
 * function tools become Chat's nested ones, `text.format` becomes `response_format`, and
 * `max_output_tokens` becomes `max_tokens`. The input items are also returned with ids, as
 * `GET responses/{id}/input_items` lists them. Pure functions; no HTTP.
 */
import { gatewayError } from '../../../core/plugins/index.js';
import { isJsonObject as isObject, type JsonObject as Json } from '../../_shared/openai/json-object.js';
import { newId } from './ids.js';
import { summaryText } from './answer.js';
import type { ReasoningSeal } from '../../_shared/openai/reasoning-seal.js';
import { customCallAsChat, toChatToolChoice, toChatTools, type ToolNames } from './tools.js';
import type { ResponsesBody } from './schema.js';
import { effortOfResponses, REASONING_EFFORT } from '../reasoning-effort.js';

/** A Chat Completions message, as the services of the standard adapter take it. */
export type ChatMessage = Json;

export interface ChatTranslation {
  /** The chat request's fields other than `model` (the adapter splits them into data and config). */
  chat: Json;
  /** The conversation after this turn's input, without the instructions: what a follow-up continues. */
  conversation: ChatMessage[];
  /** This turn's input items with ids and statuses. */
  inputItems: Json[];
  /** Hosted tools left out (the engine runs none), and the map from chat tool names back. */
  dropped: string[];
  names: ToolNames;
}

/** Request fields a chat service also takes, under the same name. */
const SAME_NAME = ['temperature', 'top_p', 'parallel_tool_calls', 'metadata', 'user'] as const;

const invalid = (param: string, reason: string) => gatewayError('VALIDATION_FAILED', { param, args: { reason: `${param} ${reason}` } });

/**
 * The chat request for `body`, continuing `history` (the stored conversation of
 * `previous_response_id`; its instructions are not carried over, as OpenAI does).
 */
export function toChatRequest(body: ResponsesBody, history: readonly ChatMessage[] = [], seal?: ReasoningSeal): ChatTranslation {
  const tools = toChatTools(body.tools);
  const inputItems = normaliseInput(body.input);
  const turn = itemsToMessages(inputItems, tools.names, seal);
  const conversation = [...history, ...turn];
  const messages: ChatMessage[] = [];
  if (typeof body.instructions === 'string' && body.instructions) messages.push({ role: 'system', content: body.instructions });
  messages.push(...conversation);
  if (messages.length === 0) throw invalid('input', 'is required (a string or a list of input items)');

  const chat: Json = { messages };
  if (body.stream === true) {
    chat.stream = true;
    // The terminal events carry usage (AI SDK requires it), so ask the service for it.
    chat.stream_options = { include_usage: true };
  }
  for (const key of SAME_NAME) if (body[key] !== undefined && body[key] !== null) chat[key] = body[key];
  if (typeof body.max_output_tokens === 'number') chat.max_tokens = body.max_output_tokens;
  const effort = effortOfResponses(body.reasoning);
  if (effort) chat[REASONING_EFFORT] = effort;
  if (tools.tools.length) chat.tools = tools.tools;
  if (body.tool_choice !== undefined && body.tool_choice !== null) chat.tool_choice = toChatToolChoice(body.tool_choice, tools.names);
  const format = body.text?.format;
  if (format && format.type !== 'text') chat.response_format = toResponseFormat(format);
  return { chat, conversation, inputItems, dropped: tools.dropped, names: tools.names };
}

/** Chat config names that differ from the Responses request's, for errors that name a field. */
export const CHAT_TO_RESPONSES_PARAM: Readonly<Record<string, string>> = {
  max_tokens: 'max_output_tokens',
  response_format: 'text.format',
  reasoning_effort: 'reasoning.effort',
};

function toResponseFormat(format: Json): Json {
  if (format.type === 'json_object') return { type: 'json_object' };
  const schema: Json = { name: typeof format.name === 'string' ? format.name : 'response', schema: format.schema ?? {} };
  if (format.description !== undefined) schema.description = format.description;
  if (format.strict !== undefined && format.strict !== null) schema.strict = format.strict;
  return { type: 'json_schema', json_schema: schema };
}

/** The input as items with ids: a string is one user message; items keep their fields. */
export function normaliseInput(input: ResponsesBody['input']): Json[] {
  if (input === undefined || input === null) return [];
  if (typeof input === 'string')
    return [{ id: newId('msg'), type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: input }] }];
  return input.map((raw, index) => normaliseItem(raw as Json, index));
}

function normaliseItem(item: Json, index: number): Json {
  const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
  switch (type) {
    case 'message': {
      if (typeof item.role !== 'string') throw invalid(`input[${index}].role`, 'is required');
      const content =
        typeof item.content === 'string'
          ? [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: item.content }]
          : item.content;
      if (!Array.isArray(content)) throw invalid(`input[${index}].content`, 'must be a string or a list of content parts');
      return { ...item, type, id: typeof item.id === 'string' ? item.id : newId('msg'), status: item.status ?? 'completed', content };
    }
    case 'function_call':
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string')
        throw invalid(`input[${index}]`, 'a function_call needs call_id and name');
      return {
        ...item,
        id: typeof item.id === 'string' ? item.id : newId('fc'),
        arguments: typeof item.arguments === 'string' ? item.arguments : '{}',
        status: item.status ?? 'completed',
      };
    case 'function_call_output':
    case 'custom_tool_call_output':
      if (typeof item.call_id !== 'string') throw invalid(`input[${index}].call_id`, 'is required');
      return { ...item, id: typeof item.id === 'string' ? item.id : newId('fco'), status: item.status ?? 'completed' };
    case 'custom_tool_call':
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string')
        throw invalid(`input[${index}]`, 'a custom_tool_call needs call_id and name');
      return {
        ...item,
        id: typeof item.id === 'string' ? item.id : newId('ctc'),
        input: typeof item.input === 'string' ? item.input : '',
        status: item.status ?? 'completed',
      };
    case 'reasoning':
      // Reasoning of an earlier answer: it goes back to the engine with the assistant turn it led to.
      return { ...item, id: typeof item.id === 'string' ? item.id : newId('rs') };
    default:
      throw invalid(
        `input[${index}].type`,
        `'${String(type)}' is not supported here (message, function_call, function_call_output, custom_tool_call, custom_tool_call_output, reasoning)`,
      );
  }
}

/** Input items as chat messages; consecutive function calls form one assistant turn (C.1). */
export function itemsToMessages(items: readonly Json[], names: ToolNames, seal?: ReasoningSeal): ChatMessage[] {
  const messages: ChatMessage[] = [];
  // Reasoning items precede the assistant turn they led to: their text joins that turn.
  let reasoning = '';
  const assistantTurn = (message: ChatMessage) => {
    if (reasoning) message.reasoning_content = reasoning;
    reasoning = '';
    return message;
  };
  for (const item of items) {
    if (item.type === 'reasoning') {
      reasoning += reasoningInput(item, seal);
    } else if (item.type === 'message') {
      const message = messageOf(item);
      messages.push(message.role === 'assistant' ? assistantTurn(message) : message);
    } else if (item.type === 'function_call' || item.type === 'custom_tool_call') {
      const call =
        item.type === 'custom_tool_call'
          ? customCallAsChat(item)
          : {
              id: item.call_id,
              type: 'function',
              function: { name: names.toChat(String(item.name), item.namespace), arguments: item.arguments },
            };
      const last = messages.at(-1);
      if (last?.role === 'assistant') {
        if (Array.isArray(last.tool_calls)) (last.tool_calls as unknown[]).push(call);
        else last.tool_calls = [call];
      } else {
        messages.push(assistantTurn({ role: 'assistant', content: null, tool_calls: [call] }));
      }
    } else if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: outputText(item.output) });
    }
  }
  return messages;
}

/**
 * The engine reasoning a reasoning item carries back: its `encrypted_content` when this gateway sealed
 * it; nothing when another provider did (opaque to this gateway); else its summary text.
 */
function reasoningInput(item: Json, seal: ReasoningSeal | undefined): string {
  if (item.encrypted_content !== undefined && item.encrypted_content !== null) return seal?.open(item.encrypted_content) ?? '';
  return summaryText(item);
}

function messageOf(item: Json): ChatMessage {
  // A developer message is a chat system message: every chat engine takes `system` (OpenAI reads it as
  // developer for its reasoning models), while some refuse `developer` (llama-cpp-python's server
  // answers 500 to Codex's first request); the Messages translation does the same.
  const role = item.role === 'developer' ? 'system' : item.role;
  const parts = item.content as unknown[];
  if (role === 'assistant' || role === 'system') {
    // Chat takes these as text: the output_text (or input_text) parts joined, refusals included.
    return { role, content: parts.map((p) => (isObject(p) ? String(p.text ?? p.refusal ?? '') : '')).join('') };
  }
  const content = parts.map((p, i) => chatPart(p, i));
  // Text alone goes as a string, the form every chat engine takes (llama.cpp's server and some chat
  // templates fail on a list of parts); parts stay a list when they carry images or files.
  if (content.every((part) => part.type === 'text')) return { role, content: content.map((part) => part.text as string).join('') };
  return { role, content };
}

function chatPart(part: unknown, index: number): Json {
  if (!isObject(part)) throw invalid(`content[${index}]`, 'must be an object');
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: String(part.text ?? '') };
    case 'input_image': {
      if (typeof part.image_url !== 'string') throw invalid(`content[${index}].image_url`, 'is required (file_id is not supported)');
      const image: Json = { url: part.image_url };
      if (part.detail !== undefined) image.detail = part.detail;
      return { type: 'image_url', image_url: image };
    }
    case 'input_file': {
      const file: Json = {};
      if (part.file_data !== undefined) file.file_data = part.file_data;
      if (part.filename !== undefined) file.filename = part.filename;
      if (part.file_id !== undefined) file.file_id = part.file_id;
      return { type: 'file', file };
    }
    default:
      throw invalid(`content[${index}].type`, `'${String(part.type)}' is not supported`);
  }
}

/** A function call's output as tool-message text: a string as is, a list of parts as their text joined. */
function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join('');
  return JSON.stringify(output ?? '');
}
