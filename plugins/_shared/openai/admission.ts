/**
 * How the OpenAI- and Anthropic-compatible routes (chat, Responses, Messages, direct, audio) are
 * admitted by core's one admission (`ctx.admission.request`): the key from any header official
 * clients use, the body read and checked, and its model resolved to a service, with the chat
 * adapters' 404 MODEL_NOT_FOUND both for a model that names nothing and for one the key may not call
 * (admission's access check, with this refusal).
 */
import type { Context } from 'koa';
import { asChatAdapterError, type PluginContext, type RequestSteps } from '../../../core/plugins/index.js';
import { CHAT_KEY_HEADER, chatApiKey } from './auth.js';
import { chatTargetOrNotFound, modelNotFound, type ChatTarget } from './model-id.js';

/** The chat adapters' key: `Authorization` (Bearer or raw), `x-api-key` or `PLATFORM-API-KEY`. */
export const CHAT_KEY = { read: chatApiKey, header: CHAT_KEY_HEADER } as const;

/** A JSON body as it came (`text`, for routes that pass it on as sent) and parsed (`value`). */
export interface JsonText {
  text: string;
  value: unknown;
}

/**
 * The admission steps of a route whose body names its service by a model id: `read` reads the body
 * (413, 400), `check` checks it (400), `modelOf` is where the checked body names the model.
 */
export function modelRequest<Raw, Body>(
  ctx: PluginContext<any>,
  read: (koa: Context) => Promise<Raw>,
  check: (raw: Raw) => Body,
  modelOf: (body: Body) => string,
  options: { holdsStream?: boolean } = {},
): RequestSteps<Raw, Body, ChatTarget> {
  return {
    key: CHAT_KEY,
    ...options,
    read,
    check,
    target: (_koa, caller, body) => chatTargetOrNotFound(ctx, caller, modelOf(body)),
    denied: (_koa, caller, body) => modelNotFound(ctx, caller, modelOf(body)),
    // A spent budget as OpenAI clients expect it: 429 insufficient_quota, no retry (the platform API keeps 402).
    overBudget: asChatAdapterError,
  };
}

/**
 * The admission steps of a route whose JSON body names its service in `model`: the body's text and
 * value as `raw`, `check` validating the value (400). `read` is how the body is read (default: the
 * gateway's JSON reader, 413/400).
 */
export function chatRequest<Body extends { model: string }>(
  ctx: PluginContext<any>,
  check: (value: unknown) => Body,
  read: (koa: Context) => Promise<JsonText> = (koa) => ctx.http.readJsonText(koa),
): RequestSteps<JsonText, Body, ChatTarget> {
  return modelRequest(ctx, read, (raw) => check(raw.value), modelOfBody);
}

const modelOfBody = (body: { model: string }): string => body.model;
