/**
 * The `response` object (responses-and-messages.md A.3) built from a chat answer: its `output` items
 * (a `message` with `output_text`, a `function_call` per tool call), its status from the finish
 * reason (C.3), its usage (C.4), and the request's settings echoed as OpenAI does. Pure functions.
 */
import { isJsonObject as isObject, type JsonObject as Json } from '../../_shared/openai/json-object.js';
import { newId } from './ids.js';
import type { ResponsesBody } from './schema.js';
import { customCallAsChat, customInput, type ResponsesToolName, type ToolNames } from './tools.js';
import { reasoningOf, type ReasoningSeal } from '../../_shared/openai/reasoning-seal.js';

/** What a response echoes of its request, fixed before the answer comes. */
export interface ResponseHead {
  id: string;
  createdAt: number;
  /** The `model` the caller sent. */
  model: string;
  body: ResponsesBody;
  /** Chat tool names back to the request's (flattened namespaces); names unchanged without. */
  names?: ToolNames;
  /** Seals the engine's reasoning into `encrypted_content` when the request's `include` asks for it. */
  seal?: ReasoningSeal;
  /** False when the gateway keeps no responses (`responses.store: false`): the answer says `store: false`. */
  kept?: boolean;
}

/** Whether the request asked for reasoning items' `encrypted_content` (Codex always does, with store off). */
export function wantsEncryptedReasoning(head: ResponseHead): boolean {
  return Array.isArray(head.body.include) && head.body.include.includes('reasoning.encrypted_content');
}

/** The engine's reasoning as a `reasoning` item: its text as a summary part, sealed when asked. */
export function reasoningItem(head: ResponseHead, id: string, text: string, status: string): Json {
  const sealed = head.seal && wantsEncryptedReasoning(head) ? head.seal.seal(text) : undefined;
  return {
    id,
    type: 'reasoning',
    status,
    summary: text ? [{ type: 'summary_text', text }] : [],
    ...(sealed ? { encrypted_content: sealed } : {}),
  };
}

/** The response without output, in the state `status`: what `response.created` carries. */
export function responseShell(head: ResponseHead, status: string): Json {
  const b = head.body;
  return {
    id: head.id,
    object: 'response',
    created_at: head.createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: b.instructions ?? null,
    max_output_tokens: b.max_output_tokens ?? null,
    model: head.model,
    output: [],
    parallel_tool_calls: b.parallel_tool_calls ?? true,
    previous_response_id: b.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: head.kept !== false && b.store !== false,
    temperature: b.temperature ?? 1,
    text: b.text && isObject(b.text.format) ? { format: b.text.format } : { format: { type: 'text' } },
    tool_choice: b.tool_choice ?? 'auto',
    tools: (b.tools ?? []).map((t) => (isObject(t) && t.type === 'function' ? { strict: true, ...t } : t)),
    top_p: b.top_p ?? 1,
    truncation: 'disabled',
    usage: null,
    user: b.user ?? null,
    metadata: b.metadata ?? {},
  };
}

/** Chat usage (`prompt_tokens`…) as Responses usage (`input_tokens`…); zeros when there is none. */
export function responsesUsage(usage: unknown): Json {
  const u = isObject(usage) ? usage : {};
  const num = (v: unknown) => (typeof v === 'number' ? v : 0);
  const input = num(u.prompt_tokens);
  const output = num(u.completion_tokens);
  const cached = isObject(u.prompt_tokens_details) ? num(u.prompt_tokens_details.cached_tokens) : 0;
  const reasoning = isObject(u.completion_tokens_details) ? num(u.completion_tokens_details.reasoning_tokens) : 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: reasoning },
    total_tokens: typeof u.total_tokens === 'number' ? u.total_tokens : input + output,
  };
}

/** The status of a finished response and its `incomplete_details`, from the chat finish reason. */
export function finishStatus(finishReason: unknown): { status: string; incomplete_details: Json | null } {
  if (finishReason === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

export const messageItem = (id: string, text: string, status: string): Json => ({
  id,
  type: 'message',
  status,
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
});

export const functionCallItem = (id: string, callId: string, name: string, args: string, status: string, namespace?: unknown): Json => ({
  id,
  type: 'function_call',
  status,
  arguments: args,
  call_id: callId,
  name,
  ...(typeof namespace === 'string' ? { namespace } : {}),
});

/** A call of a custom (free-form) tool: its input is the raw text (tools.ts). */
export const customToolCallItem = (id: string, callId: string, name: string, input: string, status: string): Json => ({
  id,
  type: 'custom_tool_call',
  status,
  call_id: callId,
  name,
  input,
});

/** A chat tool call as its Responses item: a `function_call`, or a `custom_tool_call` for a custom tool. */
export function toolCallItem(id: string, callId: string, tool: ResponsesToolName, args: string, status: string): Json {
  return tool.custom
    ? customToolCallItem(id, callId, tool.name, customInput(args), status)
    : functionCallItem(id, callId, tool.name, args, status, tool.namespace);
}

/** A complete `chat.completion` as the finished response. */
export function responseFromChat(head: ResponseHead, completion: Json): Json {
  const choice = Array.isArray(completion.choices) && isObject(completion.choices[0]) ? completion.choices[0] : {};
  const message = isObject(choice.message) ? choice.message : {};
  const output: Json[] = [];
  const reasoning = reasoningOf(message);
  if (reasoning) output.push(reasoningItem(head, newId('rs'), reasoning, 'completed'));
  const text = typeof message.content === 'string' ? message.content : '';
  const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as unknown[]) : [];
  const refusal = typeof message.refusal === 'string' && message.refusal ? message.refusal : undefined;
  // An empty answer is still one (empty) message, as OpenAI sends it.
  if (text || (!calls.length && !refusal)) output.push(messageItem(newId('msg'), text, 'completed'));
  if (refusal)
    output.push({ id: newId('msg'), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal }] });
  for (const call of calls) {
    if (!isObject(call)) continue;
    const fn = isObject(call.function) ? call.function : {};
    const tool = head.names?.toResponses(String(fn.name ?? '')) ?? { name: String(fn.name ?? '') };
    output.push(
      toolCallItem(
        newId(tool.custom ? 'ctc' : 'fc'),
        String(call.id ?? newId('fc')),
        tool,
        typeof fn.arguments === 'string' ? fn.arguments : '{}',
        'completed',
      ),
    );
  }
  return { ...responseShell(head, 'completed'), ...finishStatus(choice.finish_reason), output, usage: responsesUsage(completion.usage) };
}

/** The assistant turn of a finished response as chat messages, for the stored conversation. */
export function outputAsMessages(output: readonly Json[], names?: ToolNames): Json[] {
  let text = '';
  let reasoning = '';
  const calls: Json[] = [];
  for (const item of output) {
    if (item.type === 'reasoning') reasoning += summaryText(item);
    else if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content) if (isObject(part) && part.type === 'output_text') text += String(part.text ?? '');
    } else if (item.type === 'function_call') {
      calls.push({
        id: item.call_id,
        type: 'function',
        function: { name: names ? names.toChat(String(item.name), item.namespace) : item.name, arguments: item.arguments },
      });
    } else if (item.type === 'custom_tool_call') {
      calls.push(customCallAsChat(item));
    }
  }
  const message: Json = { role: 'assistant', content: text || (calls.length ? null : '') };
  if (reasoning) message.reasoning_content = reasoning;
  if (calls.length) message.tool_calls = calls;
  return [message];
}

/** The text of a reasoning item's summary parts. */
export function summaryText(item: Json): string {
  return Array.isArray(item.summary) ? item.summary.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join('') : '';
}
