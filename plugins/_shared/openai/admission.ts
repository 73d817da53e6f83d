/**
 * How the OpenAI- and Anthropic-compatible routes (chat, Responses, Messages, direct, audio) are
 * admitted by core's one admission (`ctx.admission.request`): the key from any header official
 * clients use, the body read as JSON and checked, and its `model` resolved to a service, with the
 * chat adapters' 404 MODEL_NOT_FOUND both for a model that names nothing and for one the key may
 * not call (admission's access check, with this refusal).
 */
import type { Context } from 'koa';
import type { PluginContext, RequestSteps } from '../../../core/plugins/index.js';
import { CHAT_KEY_HEADER, chatApiKey } from './auth.js';
import { chatTargetOrNotFound, modelNotFound, type ChatTarget } from './model-id.js';

/** A JSON body as it came (`text`, for routes that pass it on as sent) and checked (`body`). */
export interface ChatBody<Body> {
  readonly text: string;
  readonly body: Body;
}

/** The chat adapters' key: `Authorization` (Bearer or raw), `x-api-key` or `PLATFORM-API-KEY`. */
export const CHAT_KEY = { read: chatApiKey, header: CHAT_KEY_HEADER } as const;

/**
 * The admission steps of a route whose body names its service by a model id: `read` reads and checks
 * the body (413, 400), `modelOf` is where the body names the model.
 */
export function modelRequest<Body>(
  ctx: PluginContext<any>,
  read: (koa: Context) => Promise<Body>,
  modelOf: (body: Body) => string,
  options: { holdsStream?: boolean } = {},
): RequestSteps<Body, ChatTarget> {
  return {
    key: CHAT_KEY,
    ...options,
    body: read,
    target: (_koa, caller, body) => chatTargetOrNotFound(ctx, caller, modelOf(body)),
    denied: (_koa, caller, body) => modelNotFound(ctx, caller, modelOf(body)),
  };
}

/**
 * The admission steps of a route whose JSON body names its service in `model`. `check` validates the
 * parsed body (400); `read` is how the body is read (default: the gateway's JSON reader, 413/400).
 */
export function chatRequest<Body extends { model: string }>(
  ctx: PluginContext<any>,
  check: (value: unknown) => Body,
  read: (koa: Context) => Promise<{ text: string; value: unknown }> = (koa) => ctx.http.readJsonText(koa),
): RequestSteps<ChatBody<Body>, ChatTarget> {
  const readChecked = async (koa: Context): Promise<ChatBody<Body>> => {
    const { text, value } = await read(koa);
    return { text, body: check(value) };
  };
  return modelRequest(ctx, readChecked, (request) => request.body.model);
}
