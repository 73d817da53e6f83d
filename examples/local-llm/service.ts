/**
 * A real small LLM as a dial-in model service on our SDK: chat completions in OpenAI's shape, streamed
 * token by token as partial answers, `response_format` (`json_schema` or `json_object`) enforced by a
 * grammar, and generation stopped when the gateway cancels the request (the caller went away, a
 * deadline passed). Serves both chat adapters: the standard one's data + config, or the direct one's
 * whole body.
 */
import { ModelService, ServiceError, type ModelHandlers, type ModelServiceOptions, type RequestContext } from '../../sdk/index.js';
import type { ChatTurn, GenerateOptions, LocalLlmEngine } from './engine.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Default and upper bound of `max_tokens`: a tiny model on a CPU answers short. */
const DEFAULT_MAX_TOKENS = 128;
const MAX_TOKENS_LIMIT = 1024;

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

function turns(messages: unknown): ChatTurn[] {
  if (!Array.isArray(messages) || messages.length === 0) throw ServiceError.badRequest('messages must be a non-empty array');
  return messages.map((m) => {
    if (!isObject(m)) throw ServiceError.badRequest('each message must be an object');
    const role = m.role === 'developer' ? 'system' : m.role;
    if (role !== 'system' && role !== 'user' && role !== 'assistant')
      throw ServiceError.badRequest(`message role '${String(m.role)}' is not supported`);
    return { role, text: text(m.content) };
  });
}

/** `response_format` as the grammar to generate under. */
function jsonFormat(format: unknown): GenerateOptions['json'] {
  if (!isObject(format) || format.type === 'text') return undefined;
  if (format.type === 'json_object') return 'json';
  if (format.type === 'json_schema' && isObject(format.json_schema) && isObject(format.json_schema.schema))
    return format.json_schema.schema;
  throw ServiceError.badRequest('response_format must be {type: "text" | "json_object"} or {type: "json_schema", json_schema: {schema}}');
}

function maxTokens(body: Json): number {
  const asked = body.max_completion_tokens ?? body.max_tokens;
  if (asked === undefined || asked === null) return DEFAULT_MAX_TOKENS;
  if (typeof asked !== 'number' || !Number.isInteger(asked) || asked < 1)
    throw ServiceError.badRequest('max_tokens must be a positive integer');
  return Math.min(asked, MAX_TOKENS_LIMIT);
}

export function localLlmHandlers(engine: LocalLlmEngine, modelName: string): ModelHandlers {
  return {
    async predict(request, ctx: RequestContext) {
      const data = request.data.json<Json>();
      if (!isObject(data)) throw ServiceError.badRequest('the data must be a chat request object');
      const config = request.config?.kind === 'json' ? request.config.json<Json>() : undefined;
      const body: Json = isObject(config) ? { ...config, ...data } : data;
      const conversation = turns(body.messages);
      const options = {
        maxTokens: maxTokens(body),
        temperature: typeof body.temperature === 'number' ? body.temperature : undefined,
        json: jsonFormat(body.response_format),
      };
      const head = { id: `chatcmpl-${ctx.requestId}`, created: Math.floor(Date.now() / 1000), model: modelName };
      const usageOf = (g: { promptTokens: number; completionTokens: number }) => ({
        prompt_tokens: g.promptTokens,
        completion_tokens: g.completionTokens,
        total_tokens: g.promptTokens + g.completionTokens,
      });

      if (body.stream !== true) {
        const answer = await engine.chat(conversation, { ...options, signal: ctx.signal });
        return {
          ...head,
          object: 'chat.completion',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: answer.text, refusal: null },
              logprobs: null,
              finish_reason: answer.finishReason,
            },
          ],
          usage: usageOf(answer),
        };
      }
      const withUsage = isObject(body.stream_options) && body.stream_options.include_usage === true;
      const chunk = (delta: Json, finish: string | null) => ({
        ...head,
        object: 'chat.completion.chunk',
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
        ...(withUsage ? { usage: null } : {}),
      });
      return (async function* stream() {
        // The generator's own controller also stops the model when the SDK stops reading it.
        const stop = new AbortController();
        const onCancel = () => stop.abort();
        ctx.signal.addEventListener('abort', onCancel, { once: true });
        const pieces = new TextQueue();
        const generation = engine.chat(conversation, { ...options, signal: stop.signal, onText: (t) => pieces.push(t) });
        generation.then(
          () => pieces.end(),
          (err) => pieces.fail(err),
        );
        try {
          yield chunk({ role: 'assistant', content: '' }, null);
          for await (const piece of pieces) yield chunk({ content: piece }, null);
          const answer = await generation;
          if (answer.cancelled) return;
          yield chunk({}, answer.finishReason);
          if (withUsage) yield { ...head, object: 'chat.completion.chunk', choices: [], usage: usageOf(answer) };
        } finally {
          ctx.signal.removeEventListener('abort', onCancel);
          stop.abort();
          await generation.catch(() => undefined);
        }
      })();
    },
  };
}

/** Text pieces from the model's callback to the answer stream, in order. */
class TextQueue implements AsyncIterable<string> {
  readonly #items: string[] = [];
  #done = false;
  #error: unknown;
  #wake: (() => void) | undefined;

  push(text: string): void {
    this.#items.push(text);
    this.#wake?.();
  }

  end(): void {
    this.#done = true;
    this.#wake?.();
  }

  fail(error: unknown): void {
    this.#error = error;
    this.end();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    for (;;) {
      const next = this.#items.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.#error) throw this.#error;
      if (this.#done) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }
}

/** Starts the service; gateways and token default to PLATFORM_GRPC_HOST(S) and PLATFORM_SERVICE_TOKEN. */
export function startLocalLlmService(engine: LocalLlmEngine, modelName: string, options: Partial<ModelServiceOptions> = {}): ModelService {
  return new ModelService(localLlmHandlers(engine, modelName), { descriptor: { name: 'local-llm' }, ...options }).start();
}
