/**
 * A chat stream translated to the Responses API's typed events (responses-and-messages.md A.4, C.5):
 * `response.created` and `response.in_progress` first, then each output item opened, filled and
 * closed one after another (a message's text, each function call's arguments), then the terminal
 * event with the whole response and its usage. Every event carries `sequence_number` 0, 1, 2…, and
 * its name in both the `event:` line and `data.type`. One instance per streamed request.
 */
import type { GatewayError } from '../../../core/plugins/index.js';
import { isJsonObject as isObject, parseJsonObject, type JsonObject as Json } from '../../_shared/openai/json-object.js';
import type { SseFormat } from '../../_shared/openai/relay.js';
import {
  customToolCallItem,
  finishStatus,
  functionCallItem,
  messageItem,
  reasoningItem,
  responseFromChat,
  responseShell,
  responsesUsage,
  summaryText,
  toolCallItem,
  type ResponseHead,
} from './answer.js';
import { customInput } from './tools.js';
import { reasoningOf } from '../../_shared/openai/reasoning-seal.js';
import { newId } from './ids.js';

interface OpenItem {
  item: Json;
  outputIndex: number;
  /** Accumulated text (message) or arguments (function call). */
  value: string;
}

export class ResponsesStream {
  readonly head: ResponseHead;
  /** The finished response (set by the terminal event), for the store. */
  final: Json | undefined;
  #sequence = 0;
  #started = false;
  #output: Json[] = [];
  #open: OpenItem | undefined;
  /** Chat tool-call index → the function-call item it fills. */
  #calls = new Map<number, OpenItem>();
  #finishReason: unknown = null;
  #usage: unknown;

  constructor(head: ResponseHead) {
    this.head = head;
  }

  #event(type: string, fields: Json): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.#sequence++, ...fields })}\n\n`;
  }

  #start(): string {
    if (this.#started) return '';
    this.#started = true;
    const shell = responseShell(this.head, 'in_progress');
    return this.#event('response.created', { response: shell }) + this.#event('response.in_progress', { response: shell });
  }

  /** One `chat.completion.chunk` (JSON text) as the events it makes. */
  chunk(json: string): string {
    let out = this.#start();
    const chunk = parseJsonObject(json);
    if (!chunk) return out;
    if (isObject(chunk.usage)) this.#usage = chunk.usage;
    const choice = Array.isArray(chunk.choices) && isObject(chunk.choices[0]) ? chunk.choices[0] : undefined;
    if (!choice) return out;
    const delta = isObject(choice.delta) ? choice.delta : {};
    const reasoning = reasoningOf(delta);
    if (reasoning) out += this.#reasoning(reasoning);
    if (typeof delta.content === 'string' && delta.content) out += this.#text(delta.content);
    if (Array.isArray(delta.tool_calls)) for (const fragment of delta.tool_calls) if (isObject(fragment)) out += this.#toolCall(fragment);
    if (choice.finish_reason != null) this.#finishReason = choice.finish_reason;
    return out;
  }

  /** A complete `chat.completion` given to a streaming request, as the same events. */
  whole(json: string): string {
    let out = this.#start();
    const completion = parseJsonObject(json);
    if (!completion) return out;
    const response = responseFromChat(this.head, completion);
    for (const item of response.output as Json[]) {
      if (item.type === 'reasoning') {
        out += this.#reasoning(summaryText(item));
      } else if (item.type === 'message') {
        const part = (item.content as Json[])[0];
        if (part?.type === 'output_text') out += this.#text(String(part.text ?? ''), true);
      } else if (item.type === 'function_call') {
        const name = this.head.names ? this.head.names.toChat(String(item.name), item.namespace) : item.name;
        out += this.#toolCall({ index: this.#calls.size, id: item.call_id, function: { name, arguments: item.arguments } });
      }
    }
    const choice = Array.isArray(completion.choices) && isObject(completion.choices[0]) ? completion.choices[0] : {};
    this.#finishReason = choice.finish_reason ?? 'stop';
    this.#usage = completion.usage;
    return out;
  }

  /** Reasoning text: into the open reasoning item, or a new one (its summary part opened with it). */
  #reasoning(text: string): string {
    let out = '';
    if (this.#open?.item.type !== 'reasoning') {
      out += this.#close();
      const item: Json = { id: newId('rs'), type: 'reasoning', summary: [] };
      out += this.#add(item);
      out += this.#event('response.reasoning_summary_part.added', {
        item_id: item.id,
        output_index: this.#open!.outputIndex,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      });
    }
    const open = this.#open!;
    open.value += text;
    return (
      out +
      this.#event('response.reasoning_summary_text.delta', {
        item_id: open.item.id,
        output_index: open.outputIndex,
        summary_index: 0,
        delta: text,
      })
    );
  }

  #text(text: string, force = false): string {
    let out = '';
    if (this.#open?.item.type !== 'message') {
      out += this.#close();
      const item = messageItem(newId('msg'), '', 'in_progress');
      item.content = [];
      out += this.#add(item);
      out += this.#event('response.content_part.added', {
        item_id: item.id,
        output_index: this.#open!.outputIndex,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      });
    }
    const open = this.#open!;
    open.value += text;
    if (text || force)
      out += this.#event('response.output_text.delta', {
        item_id: open.item.id,
        output_index: open.outputIndex,
        content_index: 0,
        delta: text,
        logprobs: [],
      });
    return out;
  }

  #toolCall(fragment: Json): string {
    let out = '';
    const index = typeof fragment.index === 'number' ? fragment.index : 0;
    const fn = isObject(fragment.function) ? fragment.function : {};
    let target = this.#calls.get(index);
    if (!target || (typeof fragment.id === 'string' && fragment.id !== target.item.call_id)) {
      out += this.#close();
      const mapped = this.head.names?.toResponses(typeof fn.name === 'string' ? fn.name : '') ?? {
        name: typeof fn.name === 'string' ? fn.name : '',
      };
      const item = toolCallItem(
        newId(mapped.custom ? 'ctc' : 'fc'),
        typeof fragment.id === 'string' ? fragment.id : newId('fc'),
        mapped,
        '',
        'in_progress',
      );
      out += this.#add(item);
      target = this.#open!;
      this.#calls.set(index, target);
    }
    const args = typeof fn.arguments === 'string' ? fn.arguments : '';
    if (args) {
      // Arguments for a call that is no longer the open item cannot be streamed in order: items
      // are closed one after another. Services send them in order, so this keeps what came.
      target.value += args;
      // A custom tool's input is the string inside the arguments' JSON: it is sent whole when the call closes.
      if (target === this.#open && target.item.type === 'function_call')
        out += this.#event('response.function_call_arguments.delta', {
          item_id: target.item.id,
          output_index: target.outputIndex,
          delta: args,
        });
    }
    return out;
  }

  #add(item: Json): string {
    const outputIndex = this.#output.length;
    this.#output.push(item);
    this.#open = { item, outputIndex, value: '' };
    return this.#event('response.output_item.added', { output_index: outputIndex, item });
  }

  /** Closes the open item with its `.done` events carrying the full value. */
  #close(): string {
    const open = this.#open;
    if (!open) return '';
    this.#open = undefined;
    const { item, outputIndex, value } = open;
    let out = '';
    let done: Json;
    if (item.type === 'reasoning') {
      const part = { type: 'summary_text', text: value };
      out += this.#event('response.reasoning_summary_text.done', {
        item_id: item.id,
        output_index: outputIndex,
        summary_index: 0,
        text: value,
      });
      out += this.#event('response.reasoning_summary_part.done', { item_id: item.id, output_index: outputIndex, summary_index: 0, part });
      done = { ...reasoningItem(this.head, String(item.id), value, 'completed') };
    } else if (item.type === 'message') {
      const part = { type: 'output_text', text: value, annotations: [], logprobs: [] };
      out += this.#event('response.output_text.done', {
        item_id: item.id,
        output_index: outputIndex,
        content_index: 0,
        text: value,
        logprobs: [],
      });
      out += this.#event('response.content_part.done', { item_id: item.id, output_index: outputIndex, content_index: 0, part });
      done = messageItem(String(item.id), value, 'completed');
    } else if (item.type === 'custom_tool_call') {
      const input = customInput(value);
      out += this.#event('response.custom_tool_call_input.delta', { item_id: item.id, output_index: outputIndex, delta: input });
      out += this.#event('response.custom_tool_call_input.done', { item_id: item.id, output_index: outputIndex, input });
      done = customToolCallItem(String(item.id), String(item.call_id), String(item.name), input, 'completed');
    } else {
      out += this.#event('response.function_call_arguments.done', { item_id: item.id, output_index: outputIndex, arguments: value });
      done = functionCallItem(String(item.id), String(item.call_id), String(item.name), value, 'completed', item.namespace);
    }
    this.#output[outputIndex] = done;
    return out + this.#event('response.output_item.done', { output_index: outputIndex, item: done });
  }

  /** The end of a finished stream: the open item closed, then `response.completed` or `.incomplete`. */
  finish(): string {
    let out = this.#start();
    out += this.#close();
    // Function-call items closed early may have been given more arguments later.
    for (const call of this.#calls.values()) {
      const done = this.#output[call.outputIndex]!;
      if (done.type === 'custom_tool_call') done.input = customInput(call.value);
      else if (done.arguments !== call.value) done.arguments = call.value;
    }
    const { status, incomplete_details } = finishStatus(this.#finishReason);
    this.final = { ...responseShell(this.head, status), incomplete_details, output: this.#output, usage: responsesUsage(this.#usage) };
    return out + this.#event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: this.final });
  }

  /** An error after the stream began: `error` (flat and nested, A.5), then `response.failed`. */
  fail(err: GatewayError): string {
    let out = this.#start();
    const code = err.upstream?.code ?? err.code;
    const message = err.expose ? err.message : 'Internal gateway error';
    const param = err.upstream ? err.upstream.param : err.param;
    const type = err.upstream?.type ?? err.type;
    out += this.#event('error', { code, message, param, error: { type, code, message, param } });
    this.final = {
      ...responseShell(this.head, 'failed'),
      error: { code, message },
      output: this.#output,
      usage: responsesUsage(this.#usage),
    };
    return out + this.#event('response.failed', { response: this.final });
  }
}

/** The relay's view of a Responses stream: each service answer goes through the request's translator. */
export const RESPONSES_SSE: SseFormat<ResponsesStream> = {
  partial: (json, stream) => stream.chunk(json),
  whole: (json, stream) => stream.whole(json),
  error: (err, stream) => stream.fail(err),
  end: (stream) => stream.finish(),
};
