/**
 * What the two OpenAI-compatible audio bridges share: where they live and how a request is admitted.
 * The key and model rules are the chat adapters' (reference/openai-wire.md), so the steps come from
 * plugins/_shared/openai.
 */
import type { Context } from 'koa';
import type { PluginContext, RequestSteps } from '../../../core/plugins/index.js';
import { modelRequest } from '../openai/admission.js';
import type { ChatTarget } from '../openai/model-id.js';

/** The chat adapter's base: the audio routes sit beside chat/completions. */
export const OPENAI_BASE = '/api/adapters/chatapi';

/** `<base>/<path>` and `<base>/v1/<path>`. */
export const openAiRoute = (path: string): string => `${OPENAI_BASE}{/v1}/${path}`;

/**
 * The admission of an audio route (core's `ctx.admission.request`): the caller by `Authorization:
 * Bearer <key>`, a raw `Authorization: <key>`, `x-api-key` or `PLATFORM-API-KEY` (401/402/403), its
 * rate (429), one of the account's stream slots held until the response closes (429), the body
 * (`read`, `check`), and the service its model names as `<author>/<service>` (404 MODEL_NOT_FOUND,
 * OpenAI's status for an unknown model, also for a service the key may not call).
 */
export function audioRequest<Raw, Body>(
  ctx: PluginContext<any>,
  read: (koa: Context) => Promise<Raw>,
  check: (raw: Raw) => Body,
  modelOf: (body: Body) => string,
): RequestSteps<Raw, Body, ChatTarget> {
  return modelRequest(ctx, read, check, modelOf, { holdsStream: true });
}
