/**
 * From a predict request (what any model service receives) to the JSON body an HTTP engine takes:
 * the data and config merged, and the model named as the engine knows it. Pure; no HTTP.
 */
import {
  gatewayError,
  parseJson,
  parsedValueOf,
  type PayloadProto,
  type PredictRequestProto,
  type ServiceEntry,
  type UpstreamConfig,
} from '../../core/plugins/index.js';

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Whether a payload's data type marks the caller's body as is (the direct adapter's, or a Responses
 * body for a `nativeResponses` service), whose `model` is `<author>/<service>[/model]`.
 */
export function isDirectDataType(dataType: string | undefined): boolean {
  return (
    dataType !== undefined &&
    (dataType.endsWith('#/ChatCompletionDirectProxy') || dataType.endsWith('#/JsonObject') || isResponsesRequestType(dataType))
  );
}

/** Whether a payload's data type marks a Responses request passed as the caller sent it: it goes to the engine's `/responses`. */
export function isResponsesRequestType(dataType: string | undefined): boolean {
  return dataType !== undefined && dataType.endsWith('#/ResponsesRequest');
}

/**
 * Our model name in a request: through the direct adapter the body keeps the caller's
 * `<author>/<service>[/model]` and ours is the part after the second `/`; through the standard
 * adapter and the predict API `model` is already ours (or absent).
 */
export function ourModel(model: unknown, direct: boolean): string | undefined {
  if (typeof model !== 'string' || model === '') return undefined;
  if (!direct) return model;
  const first = model.indexOf('/');
  if (first < 0) return model;
  const second = model.indexOf('/', first + 1);
  return second < 0 ? undefined : model.slice(second + 1) || undefined;
}

/**
 * `upstream.models` as a Map, made once per service: the name looked up is the caller's, and a plain
 * object would answer `constructor`, `toString` or `__proto__` from its prototype.
 */
const modelMaps = new WeakMap<UpstreamConfig, ReadonlyMap<string, string>>();

function modelMapOf(upstream: UpstreamConfig): ReadonlyMap<string, string> {
  let map = modelMaps.get(upstream);
  if (!map) modelMaps.set(upstream, (map = new Map(Object.entries(upstream.models))));
  return map;
}

/**
 * The engine's model: ours mapped through `upstream.models`; a name without an entry is refused
 * (404 MODEL_NOT_FOUND) unless the service passes unmapped names as they are (`upstream.passModels`)
 * or it is one of the defaults the operator named (`upstream.defaultModel`, the service's default
 * model, which the chat adapter sends by name): otherwise any caller could run any model the
 * engine's key reaches. Without a name, `upstream.defaultModel`, else the service's default model mapped.
 */
export function engineModel(ours: string | undefined, upstream: UpstreamConfig, service: ServiceEntry): string | undefined {
  const models = modelMapOf(upstream);
  // A service alias (the direct adapter keeps the caller's `model`) names the service, not an engine model.
  if (ours !== undefined && !models.has(ours) && service.aliases?.includes(ours)) ours = undefined;
  if (ours !== undefined) {
    const mapped = models.get(ours);
    if (mapped !== undefined) return mapped;
    if (upstream.passModels || ours === upstream.defaultModel || ours === service.defaultModel) return ours;
    throw gatewayError('MODEL_NOT_FOUND', { param: 'model', args: { model: `${service.account.name}/${service.name}/${ours}` } });
  }
  if (upstream.defaultModel) return upstream.defaultModel;
  const fallback = service.defaultModel;
  return fallback === undefined ? undefined : (models.get(fallback) ?? fallback);
}

/** Whether a payload's data type marks the standard adapter's chat request (OpenAI's format, split). */
export function isChatRequestType(dataType: string | undefined): boolean {
  return dataType !== undefined && dataType.endsWith('#/ChatCompletionRequest');
}

/** Where Messages requests go, for the refusal of other formats to a Messages engine. */
const MESSAGES_ROUTES =
  'POST /api/adapters/chatapi/v1/messages (any client of the Anthropic SDKs) or /api/adapters/chatapi-direct/v1/messages';

/**
 * The engine body of a predict: the data object, over the config object when the request is not a
 * direct one (the standard adapter splits the caller's body into the two), with `model` replaced by
 * the engine's. 400 when the data is not a JSON object or no model can be named; 400
 * UPSTREAM_FORMAT_MISMATCH when an Anthropic engine is sent anything but a Messages body (OpenAI's
 * chat, completions, embeddings or a Responses request translated to chat), naming the routes to use.
 */
export function engineBody(predict: PredictRequestProto, upstream: UpstreamConfig, service: ServiceEntry): Json {
  const data = objectOf(predict.data, 'data');
  const direct = isDirectDataType(predict.data?.dataType);
  if (upstream.api === 'anthropic' && (isChatRequestType(predict.data?.dataType) || !Array.isArray(data.messages))) {
    throw gatewayError('UPSTREAM_FORMAT_MISMATCH', { args: { service: service.name, use: MESSAGES_ROUTES } });
  }
  const config = direct || !predict.config?.json ? undefined : objectOf(predict.config, 'config');
  // A copy: the data may be the adapter's own object (parsedPayload), which `model` must not change.
  const body: Json = config ? { ...config, ...data } : { ...data };
  const model = engineModel(ourModel(body.model, direct), upstream, service);
  if (model === undefined) {
    throw gatewayError('VALIDATION_FAILED', {
      param: 'model',
      args: { reason: `no model: name one as <author>/${service.name}/<model>, or set the service's upstream.defaultModel` },
    });
  }
  body.model = model;
  capOutputTokens(body, upstream.maxOutputTokens, isResponsesRequestType(predict.data?.dataType));
  return body;
}

/** The fields a chat, completions or Messages body names its output limit in (OpenAI's newer one first). */
const OUTPUT_LIMIT_FIELDS = ['max_completion_tokens', 'max_tokens'] as const;

/**
 * `upstream.maxOutputTokens`: the most output tokens the engine is asked for, whatever the caller
 * (an agent asks for 32k) or the translation asked. A caller asking for fewer keeps theirs. The cap
 * goes in the field the body names its limit in (both when it names both); a chat or completions
 * body that names none gets `max_tokens`, the one every OpenAI-compatible engine reads (llama.cpp's
 * server ignores `max_completion_tokens`); a Responses body gets `max_output_tokens`. Embeddings
 * generate nothing and are left alone.
 */
export function capOutputTokens(body: Json, cap: number | undefined, responses: boolean): void {
  if (cap === undefined) return;
  if (responses) {
    body.max_output_tokens = capped(body.max_output_tokens, cap);
    return;
  }
  if (!Array.isArray(body.messages) && body.prompt === undefined) return;
  let named = false;
  for (const field of OUTPUT_LIMIT_FIELDS) {
    if (body[field] === undefined || body[field] === null) continue;
    body[field] = capped(body[field], cap);
    named = true;
  }
  if (!named) body.max_tokens = cap;
}

/** The caller's limit when it is a number within the cap (the engine judges odd ones), else the cap. */
const capped = (asked: unknown, cap: number): unknown => (typeof asked === 'number' && asked <= cap ? asked : cap);

/**
 * A payload's JSON object: the value an in-process adapter already parsed (parsedPayload), else its
 * text parsed by the gateway's rules.
 */
function objectOf(payload: PayloadProto | undefined, what: string): Json {
  const json = payload?.json;
  if (!json)
    throw gatewayError('VALIDATION_FAILED', {
      param: what,
      args: { reason: `the predict ${what} must be a JSON object for an HTTP engine` },
    });
  const parsed = parsedValueOf(payload);
  const value = parsed !== undefined ? parsed : parseJson(json, what);
  if (!isObject(value))
    throw gatewayError('VALIDATION_FAILED', {
      param: what,
      args: { reason: `the predict ${what} must be a JSON object for an HTTP engine` },
    });
  return value;
}
