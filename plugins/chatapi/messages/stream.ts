/**
 * A chat stream translated to the Messages API's named events (responses-and-messages.md B.3, C.5):
 * `message_start`, each content block opened lazily and closed before the next (`text_delta`,
 * `input_json_delta`), then `message_delta` with the stop reason and usage, and `message_stop`.
 * One instance per streamed request.
 */
import type { GatewayError } from '../../../core/plugins/index.js';
import { anthropicErrorEvent, anthropicMessageAsEvents, named } from '../../_shared/anthropic/events.js';
import { isJsonObject as isObject, parseJsonObject } from '../../_shared/openai/json-object.js';
import type { SseFormat } from '../../_shared/openai/relay.js';
import { reasoningOf, type ReasoningSeal } from '../../_shared/openai/reasoning-seal.js';
import { messageFromChat, messagesUsage, stopReason } from './answer.js';

export class MessagesStream {
  readonly #id: string;
  readonly #model: string;
  #started = false;
  /** Index of the open block, -1 when none. */
  #open = -1;
  #openKind: 'text' | 'tool_use' | 'thinking' | undefined;
  /** The open thinking block's text, signed when it closes. */
  #thinking = '';
  readonly #seal: ReasoningSeal | undefined;
  #blocks = 0;
  /** Chat tool-call index → its block index. */
  #calls = new Map<number, number>();
  #finishReason: unknown = null;
  #usage: unknown;

  constructor(id: string, model: string, seal?: ReasoningSeal) {
    this.#id = id;
    this.#model = model;
    this.#seal = seal;
  }

  #event(type: string, fields: Record<string, unknown>): string {
    return named(type, JSON.stringify({ type, ...fields }));
  }

  #start(): string {
    if (this.#started) return '';
    this.#started = true;
    const message = {
      id: this.#id,
      type: 'message',
      role: 'assistant',
      model: this.#model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    // Anthropic sends a ping early in every stream; clients skip it, proxies see the stream is alive.
    return this.#event('message_start', { message }) + this.#event('ping', {});
  }

  #close(): string {
    if (this.#open < 0) return '';
    let out = '';
    // A thinking block's signature goes in a signature_delta just before its stop, as Anthropic sends it.
    if (this.#openKind === 'thinking')
      out += this.#event('content_block_delta', {
        index: this.#open,
        delta: { type: 'signature_delta', signature: this.#seal!.sign(this.#thinking) },
      });
    out += this.#event('content_block_stop', { index: this.#open });
    this.#open = -1;
    this.#openKind = undefined;
    return out;
  }

  chunk(json: string): string {
    let out = this.#start();
    const chunk = parseJsonObject(json);
    if (!chunk) return out;
    if (isObject(chunk.usage)) this.#usage = chunk.usage;
    const choice = Array.isArray(chunk.choices) && isObject(chunk.choices[0]) ? chunk.choices[0] : undefined;
    if (!choice) return out;
    const delta = isObject(choice.delta) ? choice.delta : {};
    const reasoning = this.#seal ? reasoningOf(delta) : '';
    if (reasoning) {
      if (this.#openKind !== 'thinking') {
        out += this.#close();
        this.#open = this.#blocks++;
        this.#openKind = 'thinking';
        this.#thinking = '';
        out += this.#event('content_block_start', { index: this.#open, content_block: { type: 'thinking', thinking: '', signature: '' } });
      }
      this.#thinking += reasoning;
      out += this.#event('content_block_delta', { index: this.#open, delta: { type: 'thinking_delta', thinking: reasoning } });
    }
    if (typeof delta.content === 'string' && delta.content) {
      if (this.#openKind !== 'text') {
        out += this.#close();
        this.#open = this.#blocks++;
        this.#openKind = 'text';
        out += this.#event('content_block_start', { index: this.#open, content_block: { type: 'text', text: '' } });
      }
      out += this.#event('content_block_delta', { index: this.#open, delta: { type: 'text_delta', text: delta.content } });
    }
    for (const fragment of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      if (!isObject(fragment)) continue;
      const index = typeof fragment.index === 'number' ? fragment.index : 0;
      const fn = isObject(fragment.function) ? fragment.function : {};
      let block = this.#calls.get(index);
      if (block === undefined) {
        out += this.#close();
        block = this.#blocks++;
        this.#calls.set(index, block);
        this.#open = block;
        this.#openKind = 'tool_use';
        out += this.#event('content_block_start', {
          index: block,
          content_block: { type: 'tool_use', id: fragment.id, name: fn.name ?? '', input: {} },
        });
      }
      if (typeof fn.arguments === 'string' && fn.arguments && block === this.#open) {
        out += this.#event('content_block_delta', { index: block, delta: { type: 'input_json_delta', partial_json: fn.arguments } });
      }
    }
    if (choice.finish_reason != null) this.#finishReason = choice.finish_reason;
    return out;
  }

  /** A complete `chat.completion` given to a streaming request. */
  whole(json: string): string {
    const completion = parseJsonObject(json);
    if (!completion) return this.#start();
    this.#started = true;
    this.#finishReason = undefined;
    return anthropicMessageAsEvents(JSON.stringify(messageFromChat(completion, this.#id, this.#model, this.#seal)));
  }

  finish(): string {
    // whole() already wrote the message through message_stop.
    if (this.#finishReason === undefined) return '';
    let out = this.#start() + this.#close();
    const usage = messagesUsage(this.#usage);
    out += this.#event('message_delta', { delta: { stop_reason: stopReason(this.#finishReason), stop_sequence: null }, usage });
    return out + this.#event('message_stop', {});
  }

  fail(err: GatewayError): string {
    return this.#start() + anthropicErrorEvent(err);
  }
}

export const MESSAGES_SSE: SseFormat<MessagesStream> = {
  partial: (json, stream) => stream.chunk(json),
  whole: (json, stream) => stream.whole(json),
  error: (err, stream) => stream.fail(err),
  end: (stream) => stream.finish(),
};
