/**
 * A general chat-model proxy service: forwards chat completions, legacy completions and embeddings
 * to any OpenAI-compatible HTTP upstream (OpenAI, vLLM, Ollama, LiteLLM…), streaming included.
 *
 * It serves both chat adapters:
 * - standard adapter: data `{model, messages|prompt|input, stream}` plus the config (every other
 *   field); the upstream body is the two merged, `model` being the bare model;
 * - direct adapter: data is the caller's whole body (data type `ChatCompletionDirectProxy`), whose
 *   `model` is `<author>/<service>[/model]`; the upstream model is the part after the second `/`.
 *
 * A streamed upstream answer goes back as one partial answer per `data:` event, the event's JSON text
 * unchanged; `[DONE]` ends the stream, and a stream that ends without it fails (it was cut off).
 * Upstream errors are relayed exactly (examples/shared/upstream-error.ts).
 */
import { ModelService, ServiceError, rawJsonPayload, type ModelHandlers, type ModelServiceOptions, type RequestContext } from '@model-gateway/sdk';
import { isDirectDataType, readSse, upstreamModel } from '../shared/sse.js';
import { untilTerminal } from '../shared/stream-end.js';
import { postJson } from '../shared/upstream.js';
import { upstreamError, upstreamStreamError } from '../shared/upstream-error.js';

type Json = Record<string, unknown>;

export interface OpenAiProxySettings {
  /** Base URL with the version, e.g. `https://api.openai.com/v1`. Env OPENAI_BASE_URL. */
  baseUrl: string;
  /** Env OPENAI_API_KEY; sent as `Authorization: Bearer`. */
  apiKey?: string;
  /** Model used when the request names none. Env OPENAI_DEFAULT_MODEL. */
  defaultModel?: string;
}

export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): OpenAiProxySettings {
  return {
    baseUrl: env.OPENAI_BASE_URL || 'https://api.openai.com/v1',
    apiKey: env.OPENAI_API_KEY || undefined,
    defaultModel: env.OPENAI_DEFAULT_MODEL || undefined,
  };
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function endpointOf(body: Json): string {
  if (Array.isArray(body.messages)) return '/chat/completions';
  if (body.prompt !== undefined) return '/completions';
  if (body.input !== undefined) return '/embeddings';
  throw ServiceError.badRequest('expected a chat (messages), completion (prompt) or embeddings (input) request');
}

export function openAiProxyHandlers(settings: OpenAiProxySettings): ModelHandlers {
  const base = settings.baseUrl.replace(/\/+$/, '');
  return {
    async predict(request, ctx: RequestContext) {
      const data = request.data.json<Json>();
      if (!isObject(data)) throw ServiceError.badRequest('the data must be a JSON object');
      const direct = isDirectDataType(request.data.dataType);
      const config = !direct && request.config?.kind === 'json' ? request.config.json<Json>() : undefined;
      const body: Json = isObject(config) ? { ...config, ...data } : { ...data };
      const model = upstreamModel(body.model, direct, settings.defaultModel);
      if (!model) throw ServiceError.badRequest('no model: name one as <author>/<service>/<model> or set OPENAI_DEFAULT_MODEL');
      body.model = model;
      const path = endpointOf(body);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: body.stream === true ? 'text/event-stream' : 'application/json',
        ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}),
      };
      const res = await postJson(`${base}${path}`, headers, JSON.stringify(body), ctx.signal);
      if (!res.ok) throw upstreamError(res.status, res.headers, await res.text().catch(() => ''), 'openai');
      if (body.stream !== true) return rawJsonPayload(await res.text());
      return (async function* relay() {
        // A stream without `data: [DONE]` was cut off: untilTerminal throws instead of ending cleanly.
        for await (const event of untilTerminal(readSse(res.body), (e) => e.data === '[DONE]', 'data: [DONE]')) {
          if (event.data === '[DONE]') return;
          if (event.data.startsWith('{"error"')) throw upstreamStreamError(event.data, 'openai', 502);
          yield rawJsonPayload(event.data);
        }
      })();
    },
  };
}

/** Starts the proxy service; gateways and token default to PLATFORM_GRPC_HOST(S) and PLATFORM_SERVICE_TOKEN. */
export function startOpenAiProxy(settings: OpenAiProxySettings = settingsFromEnv(), options: Partial<ModelServiceOptions> = {}): ModelService {
  return new ModelService(openAiProxyHandlers(settings), { descriptor: { name: 'openai-proxy' }, ...options }).start();
}
