/**
 * An Anthropic-style proxy service: forwards Messages API requests (through the direct chat adapter,
 * family `anthropic`) to a Messages-API upstream, streaming included.
 *
 * The data is the caller's body unchanged (data type `common.json#/JsonObject`); `model` is
 * `<author>/<service>[/model]` and the upstream model is the part after the second `/`.
 * Partial-answer format: a streamed answer goes back as one partial answer per upstream event, the
 * event's data object as its JSON text unchanged (its `type` is the event name, from which the
 * adapter writes `event: <type>`). An upstream `error` event becomes a service error, and a stream
 * that ends without `message_stop` fails (it was cut off). Upstream errors are relayed exactly
 * (examples/shared/upstream-error.ts). The ext call `count_tokens` asks the upstream to count.
 */
import { ModelService, ServiceError, rawJsonPayload, type ModelHandlers, type ModelServiceOptions, type RequestContext } from '@model-gateway/sdk';
import { readSse, upstreamModel } from '../shared/sse.js';
import { untilTerminal } from '../shared/stream-end.js';
import { postJson } from '../shared/upstream.js';
import { upstreamError, upstreamStreamError } from '../shared/upstream-error.js';

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

export function anthropicProxyHandlers(settings: AnthropicProxySettings): ModelHandlers {
  const base = settings.baseUrl.replace(/\/+$/, '');
  /** The upstream headers: the proxy's key and version, with the caller's version and betas when the gateway passed them. */
  const upstreamHeaders = (ctx: RequestContext): Record<string, string> => {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'anthropic-version': settings.version };
    if (settings.apiKey) headers['x-api-key'] = settings.apiKey;
    for (const name of ['anthropic-version', 'anthropic-beta']) {
      const value = headerOf(ctx, name);
      if (value) headers[name] = value;
    }
    return headers;
  };
  /** The caller's body for the upstream: the model id of the gateway replaced by the upstream model. */
  const upstreamBody = (body: unknown): Json => {
    if (!isObject(body)) throw ServiceError.badRequest('the data must be a Messages API request object');
    const model = upstreamModel(body.model, true, settings.defaultModel);
    if (!model) throw ServiceError.badRequest('no model: name one as <author>/<service>/<model> or set ANTHROPIC_DEFAULT_MODEL');
    return { ...body, model };
  };
  return {
    async predict(request, ctx: RequestContext) {
      const body = upstreamBody(request.data.json<Json>());
      const res = await postJson(`${base}/v1/messages`, upstreamHeaders(ctx), JSON.stringify(body), ctx.signal);
      if (!res.ok) throw upstreamError(res.status, res.headers, await res.text().catch(() => ''), 'anthropic');
      if (body.stream !== true) return rawJsonPayload(await res.text());
      return (async function* relay() {
        // A stream without message_stop was cut off: untilTerminal throws instead of ending cleanly.
        for await (const event of untilTerminal(readSse(res.body), (e) => e.event === 'message_stop', 'message_stop')) {
          if (event.event === 'error') throw upstreamStreamError(event.data, 'anthropic', 500);
          yield rawJsonPayload(event.data);
        }
      })();
    },
    /** `count_tokens`: the upstream counts (the gateway's v1/messages/count_tokens); never an estimate. */
    async ext(methodName, params, ctx: RequestContext) {
      if (methodName !== 'count_tokens') throw ServiceError.methodNotSupported(methodName);
      let request: unknown;
      try {
        request = JSON.parse(params.request?.text ?? '');
      } catch {
        throw ServiceError.badRequest('count_tokens expects the Messages request as JSON in the param "request"');
      }
      const res = await postJson(`${base}/v1/messages/count_tokens`, upstreamHeaders(ctx), JSON.stringify(upstreamBody(request)), ctx.signal);
      if (!res.ok) throw upstreamError(res.status, res.headers, await res.text().catch(() => ''), 'anthropic');
      return rawJsonPayload(await res.text());
    },
  };
}

/** A request header the gateway passed, by name in any case. */
function headerOf(ctx: RequestContext, name: string): string | undefined {
  for (const [key, value] of Object.entries(ctx.headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

/** Starts the proxy service; gateways and token default to PLATFORM_GRPC_HOST(S) and PLATFORM_SERVICE_TOKEN. */
export function startAnthropicProxy(settings: AnthropicProxySettings = settingsFromEnv(), options: Partial<ModelServiceOptions> = {}): ModelService {
  return new ModelService(anthropicProxyHandlers(settings), { descriptor: { name: 'anthropic-proxy' }, ...options }).start();
}
