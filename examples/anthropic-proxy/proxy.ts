/**
 * An Anthropic-style proxy service: forwards Messages API requests (through the direct chat adapter,
 * family `anthropic`) to a Messages-API upstream, streaming included.
 *
 * The data is the caller's body unchanged (data type `common.json#/JsonObject`); `model` is
 * `<author>/<service>[/model]` and the upstream model is the part after the second `/`.
 * Partial-answer format: a streamed answer goes back as one partial answer per upstream event, the
 * event's data object as its JSON text unchanged (its `type` is the event name, from which the
 * adapter writes `event: <type>`). An upstream `error` event becomes a service error.
 */
import { ModelService, ServiceError, rawJsonPayload, type ModelHandlers, type ModelServiceOptions, type RequestContext } from '@model-gateway/sdk';
import { readSse, upstreamModel } from '../shared/sse.js';
import { postJson } from '../shared/upstream.js';

type Json = Record<string, unknown>;

export interface AnthropicProxySettings {
  /** Base URL without the version, e.g. `https://api.anthropic.com`. Env ANTHROPIC_BASE_URL. */
  baseUrl: string;
  /** Env ANTHROPIC_API_KEY; sent as `x-api-key`. */
  apiKey?: string;
  /** Env ANTHROPIC_VERSION; default 2023-06-01. */
  version: string;
  /** Model used when the request names none. Env ANTHROPIC_DEFAULT_MODEL. */
  defaultModel?: string;
}

export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): AnthropicProxySettings {
  return {
    baseUrl: env.ANTHROPIC_BASE_URL || 'https://api.anthropic.com',
    apiKey: env.ANTHROPIC_API_KEY || undefined,
    version: env.ANTHROPIC_VERSION || '2023-06-01',
    defaultModel: env.ANTHROPIC_DEFAULT_MODEL || undefined,
  };
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** HTTP status of an error that arrives as a stream event (after the upstream's 200). */
const STREAM_ERROR_STATUS: Record<string, number> = {
  overloaded_error: 529, rate_limit_error: 429, api_error: 500, invalid_request_error: 400, request_too_large: 413,
};

/** Anthropic's error body `{type:"error", error:{type, message}}` as a service error. */
function anthropicError(status: number, body: unknown, fallback: string): ServiceError {
  const error = isObject(body) && isObject(body.error) ? body.error : {};
  const type = typeof error.type === 'string' ? error.type : `http_${status}`;
  const message = typeof error.message === 'string' ? error.message : fallback;
  // The upstream refusing the proxy's own key is the proxy's fault, not the caller's, and permanent.
  const refused = status === 401 || status === 403;
  return new ServiceError(`upstream.${type}`, message, refused ? 502 : status, refused ? { retryable: 'false' } : {});
}

export function anthropicProxyHandlers(settings: AnthropicProxySettings): ModelHandlers {
  const url = `${settings.baseUrl.replace(/\/+$/, '')}/v1/messages`;
  return {
    async predict(request, ctx: RequestContext) {
      const body = request.data.json<Json>();
      if (!isObject(body)) throw ServiceError.badRequest('the data must be a Messages API request object');
      const model = upstreamModel(body.model, true, settings.defaultModel);
      if (!model) throw ServiceError.badRequest('no model: name one as <author>/<service>/<model> or set ANTHROPIC_DEFAULT_MODEL');
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'anthropic-version': settings.version,
        ...(settings.apiKey ? { 'x-api-key': settings.apiKey } : {}),
      };
      const res = await postJson(url, headers, JSON.stringify({ ...body, model }), ctx.signal);
      if (!res.ok) {
        const text = await res.text().catch(() => '');
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        throw anthropicError(res.status, parsed, text.slice(0, 500) || res.statusText);
      }
      if (body.stream !== true) return rawJsonPayload(await res.text());
      return (async function* relay() {
        for await (const event of readSse(res.body)) {
          if (event.event === 'error') {
            const body = JSON.parse(event.data) as unknown;
            const type = isObject(body) && isObject(body.error) ? body.error.type : undefined;
            throw anthropicError(STREAM_ERROR_STATUS[String(type)] ?? 500, body, 'upstream stream error');
          }
          yield rawJsonPayload(event.data);
          if (event.event === 'message_stop') return;
        }
      })();
    },
  };
}

/** Starts the proxy service; gateways and token default to PLATFORM_GRPC_HOST(S) and PLATFORM_SERVICE_TOKEN. */
export function startAnthropicProxy(settings: AnthropicProxySettings = settingsFromEnv(), options: Partial<ModelServiceOptions> = {}): ModelService {
  return new ModelService(anthropicProxyHandlers(settings), { descriptor: { name: 'anthropic-proxy' }, ...options }).start();
}
