/**
 * Counting a chat request's tokens with an OpenAI-compatible engine's own tokenizer (for
 * `count_tokens`, and to name a prompt over the engine's context window): `POST /tokenize` at the
 * engine's root (next to `/v1`), which vLLM and SGLang take with the chat `messages` (and answer
 * `count`), and llama.cpp's server with `content` (and answers `tokens`); then llama-cpp-python's
 * `POST /extras/tokenize` with `input`. The chat request is tried first; an engine that refuses it
 * gets the messages' text. The count is the engine's: an engine with none of these (404, 405, 501)
 * cannot count, and the caller estimates.
 */
import { isObject, type Json } from './engine-request.js';

const TOKENIZE_PATH = '/tokenize';
const PYTHON_TOKENIZE_PATH = '/extras/tokenize';

/** The paths a count is asked at, for messages. */
export const TOKENIZE_PATHS = `${TOKENIZE_PATH} or ${PYTHON_TOKENIZE_PATH}`;

/** The engine root's path for a base URL path (`/v1` → ``, `/x/v1` → `/x`). */
export const rootPath = (basePath: string): string => basePath.replace(/\/v1$/, '');

/** What the engine may take, in the order tried: the chat request, then its text as llama.cpp's `content`, then as llama-cpp-python's `input`. */
export function tokenizeRequests(request: Json): { path: string; body: Json }[] {
  const messages = Array.isArray(request.messages) ? request.messages : [];
  const chat: Json = { messages, add_generation_prompt: true };
  if (typeof request.model === 'string') chat.model = request.model;
  if (Array.isArray(request.tools)) chat.tools = request.tools;
  const text = textOf(request);
  return [
    { path: TOKENIZE_PATH, body: chat },
    { path: TOKENIZE_PATH, body: { content: text, add_special: true } },
    { path: PYTHON_TOKENIZE_PATH, body: { input: text } },
  ];
}

/** The messages (and tools) as the text a template would wrap: roles, contents, tool calls. */
function textOf(request: Json): string {
  const parts: string[] = [];
  for (const message of Array.isArray(request.messages) ? request.messages : []) {
    if (!isObject(message)) continue;
    parts.push(String(message.role ?? ''), contentText(message.content));
    if (message.tool_calls !== undefined) parts.push(JSON.stringify(message.tool_calls));
  }
  if (Array.isArray(request.tools)) parts.push(JSON.stringify(request.tools));
  return parts.join('\n');
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join('');
}

/** The count in a tokenize answer: vLLM's `count`, else the length of `tokens`. */
export function tokenCount(answer: unknown): number | undefined {
  if (!isObject(answer)) return undefined;
  if (typeof answer.count === 'number' && Number.isInteger(answer.count)) return answer.count;
  return Array.isArray(answer.tokens) ? answer.tokens.length : undefined;
}
