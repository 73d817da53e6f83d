/**
 * What the two OpenAI-compatible audio bridges share: where they live, how the caller is admitted
 * and how `model` names a service. The key and model rules are the chat adapters' (reference/
 * openai-wire.md), so the helpers come from plugins/_shared/openai.
 */
import type { Context } from 'koa';
import type { Caller, PluginContext, ServiceEntry } from '../../../core/plugins/index.js';
import { CHAT_KEY_HEADER, chatApiKey } from '../openai/auth.js';
import { resolveChatTarget } from '../openai/model-id.js';

/** The chat adapter's base: the audio routes sit beside chat/completions. */
export const OPENAI_BASE = '/api/adapters/chatapi';

/** `<base>/<path>` and `<base>/v1/<path>`. */
export const openAiRoute = (path: string): string => `${OPENAI_BASE}{/v1}/${path}`;

/**
 * Authenticates the caller by `Authorization: Bearer <key>`, a raw `Authorization: <key>`,
 * `x-api-key` or `PLATFORM-API-KEY` (401/402/403), and counts the request against its rate (429).
 */
export function admitCaller(ctx: PluginContext<any>, koa: Context): Caller {
  const caller = ctx.pipeline.authenticate(chatApiKey(koa), CHAT_KEY_HEADER, 'MODEL_REQUESTS');
  ctx.pipeline.countRequest(caller);
  koa.state.caller = caller; // its body is read at its account's input rate
  return caller;
}

/**
 * The service `model` names, as `<author>/<service>` (account and service by name or ID). Anything
 * that names no service is 404 MODEL_NOT_FOUND, OpenAI's status for an unknown model; another
 * account's private service is 403.
 */
export function resolveModel(ctx: PluginContext<any>, caller: Caller, model: string): ServiceEntry {
  return resolveChatTarget(ctx, caller, model).service;
}
