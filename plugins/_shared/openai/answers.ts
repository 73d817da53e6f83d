/**
 * OpenAI answer shapes the adapters complete or convert so official SDKs accept them: the fields a
 * service may leave out, a whole answer given to a streaming request, and partial answers given to a
 * non-streaming one. Pure functions; no HTTP.
 */

import { isJsonObject as isObject, parseJsonObject, type JsonObject as Json } from './json-object.js';
import { hasAnswerHead } from './json-text.js';

/** Values the adapter fills into an answer when the service leaves them out (openai-wire.md 7). */
export interface AnswerDefaults {
  /** The answer id, e.g. `chatcmpl-<request id>`. */
  readonly id: string;
  /** Unix seconds. */
  readonly created: number;
  /** The `model` the caller sent. */
  readonly model: string;
  /** `chat.completion` or `text_completion`. */
  readonly object: string;
  /** The caller asked for `stream_options.include_usage`. */
  readonly includeUsage: boolean;
}

/**
 * The service's answer as the adapter returns it: unchanged when it has `id`, `object`, `created` and
 * `model` (the original text, not re-serialised), else with the missing ones filled in.
 */
export function completeAnswer(json: string, defaults: AnswerDefaults): string {
  if (hasAnswerHead(json)) return json;
  const answer = parseJsonObject(json);
  if (!answer) return json;
  if (fillMissing(answer, defaults)) return JSON.stringify(answer);
  return json;
}

/** Fills `id`, `object`, `created` and `model` where absent; true when something was added. */
function fillMissing(answer: Json, defaults: AnswerDefaults, object = defaults.object): boolean {
  let changed = false;
  if (typeof answer.id !== 'string') {
    answer.id = defaults.id;
    changed = true;
  }
  if (typeof answer.object !== 'string') {
    answer.object = object;
    changed = true;
  }
  if (typeof answer.created !== 'number') {
    answer.created = defaults.created;
    changed = true;
  }
  if (typeof answer.model !== 'string') {
    answer.model = defaults.model;
    changed = true;
  }
  return changed;
}

/**
 * A complete `chat.completion` given to a streaming request, as the chunks a streaming service would
 * have sent: role and content (and tool calls) in one delta, then the finish reason, then the usage
 * chunk when the caller asked for it. Returned as SSE `data:` events. A text completion, or an
 * answer of unknown shape, becomes one event as it is.
 */
export function wholeAnswerAsEvents(json: string, defaults: AnswerDefaults): string {
  let answer: unknown;
  try {
    answer = JSON.parse(json);
  } catch {
    return `data: ${json.replace(/[\r\n]+/g, ' ')}\n\n`;
  }
  if (!isObject(answer)) return `data: ${JSON.stringify(answer)}\n\n`;
  fillMissing(answer, defaults);
  if (answer.object !== 'chat.completion' || !Array.isArray(answer.choices)) return `data: ${JSON.stringify(answer)}\n\n`;
  const head = { id: answer.id, object: 'chat.completion.chunk', created: answer.created, model: answer.model };
  const usageField = defaults.includeUsage ? { usage: null } : {};
  let events = '';
  const finishes: Json[] = [];
  for (const raw of answer.choices as unknown[]) {
    if (!isObject(raw)) continue;
    const message = isObject(raw.message) ? raw.message : {};
    const delta: Json = { role: 'assistant', content: typeof message.content === 'string' ? message.content : '' };
    if (message.refusal != null) delta.refusal = message.refusal;
    if (Array.isArray(message.tool_calls)) {
      delta.tool_calls = (message.tool_calls as unknown[]).map((call, index) => (isObject(call) ? { index, ...call } : call));
    }
    const index = typeof raw.index === 'number' ? raw.index : 0;
    events += `data: ${JSON.stringify({ ...head, choices: [{ index, delta, logprobs: raw.logprobs ?? null, finish_reason: null }], ...usageField })}\n\n`;
    finishes.push({ index, delta: {}, logprobs: null, finish_reason: raw.finish_reason ?? 'stop' });
  }
  if (finishes.length) events += `data: ${JSON.stringify({ ...head, choices: finishes, ...usageField })}\n\n`;
  if (defaults.includeUsage && isObject(answer.usage))
    events += `data: ${JSON.stringify({ ...head, choices: [], usage: answer.usage })}\n\n`;
  return events;
}

interface ToolCallAcc {
  index: number;
  id?: string;
  type?: string;
  function: { name: string; arguments: string };
}

interface ChoiceAcc {
  index: number;
  role: string;
  content: string | null;
  refusal: string | null;
  text: string;
  toolCalls: ToolCallAcc[];
  finishReason: unknown;
  logprobs: unknown;
}

/**
 * Partial answers given to a non-streaming request, merged into the one answer the caller expects: a
 * `chat.completion` from `chat.completion.chunk`s (content appended, tool-call arguments joined), or
 * a `text_completion` from text-completion chunks.
 */
export function mergeChunks(parts: readonly string[], defaults: AnswerDefaults): string {
  const head: Json = {};
  const choices = new Map<number, ChoiceAcc>();
  let usage: unknown;
  let fingerprint: unknown;
  for (const part of parts) {
    let chunk: unknown;
    try {
      chunk = JSON.parse(part);
    } catch {
      continue;
    }
    if (!isObject(chunk)) continue;
    for (const key of ['id', 'created', 'model'] as const) if (head[key] === undefined && chunk[key] !== undefined) head[key] = chunk[key];
    if (chunk.usage != null) usage = chunk.usage;
    if (chunk.system_fingerprint != null) fingerprint = chunk.system_fingerprint;
    if (!Array.isArray(chunk.choices)) continue;
    for (const c of chunk.choices as unknown[]) {
      if (!isObject(c)) continue;
      const index = typeof c.index === 'number' ? c.index : 0;
      let acc = choices.get(index);
      if (!acc)
        choices.set(
          index,
          (acc = { index, role: 'assistant', content: null, refusal: null, text: '', toolCalls: [], finishReason: null, logprobs: null }),
        );
      if (c.finish_reason != null) acc.finishReason = c.finish_reason;
      if (typeof c.text === 'string') acc.text += c.text;
      const delta = isObject(c.delta) ? c.delta : undefined;
      if (!delta) continue;
      if (typeof delta.role === 'string') acc.role = delta.role;
      if (typeof delta.content === 'string') acc.content = (acc.content ?? '') + delta.content;
      if (typeof delta.refusal === 'string') acc.refusal = (acc.refusal ?? '') + delta.refusal;
      if (Array.isArray(delta.tool_calls)) mergeToolCalls(acc.toolCalls, delta.tool_calls as unknown[]);
    }
  }
  const ordered = [...choices.values()].sort((a, b) => a.index - b.index);
  const answer: Json = { ...head };
  fillMissing(answer, defaults);
  if (defaults.object === 'text_completion') {
    answer.choices = ordered.map((c) => ({ text: c.text, index: c.index, logprobs: null, finish_reason: c.finishReason ?? 'stop' }));
  } else {
    answer.choices = ordered.map((c) => {
      const message: Json = { role: c.role, content: c.content, refusal: c.refusal };
      if (c.toolCalls.length) {
        message.tool_calls = c.toolCalls.map((t) => ({ id: t.id, type: t.type ?? 'function', function: t.function }));
      }
      return { index: c.index, message, logprobs: c.logprobs, finish_reason: c.finishReason ?? 'stop' };
    });
  }
  if (usage !== undefined) answer.usage = usage;
  if (fingerprint !== undefined) answer.system_fingerprint = fingerprint;
  return JSON.stringify(answer);
}

function mergeToolCalls(into: ToolCallAcc[], fragments: unknown[]): void {
  for (const f of fragments) {
    if (!isObject(f)) continue;
    const index = typeof f.index === 'number' ? f.index : into.length;
    let acc = into.find((t) => t.index === index);
    if (!acc) into.push((acc = { index, function: { name: '', arguments: '' } }));
    if (typeof f.id === 'string') acc.id = f.id;
    if (typeof f.type === 'string') acc.type = f.type;
    const fn = isObject(f.function) ? f.function : undefined;
    if (fn && typeof fn.name === 'string') acc.function.name += fn.name;
    if (fn && typeof fn.arguments === 'string') acc.function.arguments += fn.arguments;
  }
}
